// validate.mjs - check docker/kubernetes/*.yaml: every document against the
// Kubernetes OpenAPI schema of its apiVersion/kind (kubernetes-models, which
// ships the schemas and validates with ajv), then the rules this project
// relies on (probes, requests, non-root, read-only root, selectors that
// match). Prints one "ok"/"not ok" line per check; exits 1 on any failure.
//   node tests/k8s/validate.mjs docker/kubernetes/*.yaml
// With --compose FILE first, FILE (a compose file) is checked too: Redis with
// its append-only file, three replicas on it, nginx in front.
import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";

const groups = {
	v1: "kubernetes-models/v1",
	"apps/v1": "kubernetes-models/apps/v1",
	"policy/v1": "kubernetes-models/policy/v1",
	"networking.k8s.io/v1": "kubernetes-models/networking.k8s.io/v1",
	"autoscaling/v2": "kubernetes-models/autoscaling/v2",
};

let failed = 0;
let n = 0;
function check(desc, ok, why) {
	n++;
	if (ok) {
		console.log(`ok ${n} - ${desc}`);
	} else {
		failed++;
		console.log(`not ok ${n} - ${desc}`);
		if (why) console.log(String(why).split("\n").slice(0, 12).map((l) => "#   " + l).join("\n"));
	}
}

let args = process.argv.slice(2);
if (args[0] === "--compose") {
	const file = args[1];
	args = args.slice(2);
	let c;
	try {
		c = parseAllDocuments(readFileSync(file, "utf8"))[0].toJS({ maxAliasCount: 100 });
		check(`${file}: YAML parses`, true);
	} catch (e) {
		check(`${file}: YAML parses`, false, e.message);
	}
	const svcs = Object.entries(c?.services ?? {});
	const redisSvc = svcs.find(([, s]) => /redis/.test(s.image ?? ""));
	check(`${file}: a Redis service with the append-only file on`,
	      !!redisSvc && (redisSvc[1].command ?? []).join(" ").includes("--appendonly yes"));
	const reps = svcs.filter(([, s]) => /^redis:\/\/[^/]+/.test(s.environment?.COLLISIOND_STORE ?? ""));
	check(`${file}: three replicas with COLLISIOND_STORE on that Redis`, reps.length === 3 &&
	      reps.every(([, s]) => s.environment.COLLISIOND_STORE.startsWith(`redis://${redisSvc?.[0]}:`)));
	check(`${file}: replicas run with a read-only root and no capabilities`,
	      reps.length > 0 && reps.every(([, s]) => s.read_only === true && (s.cap_drop ?? []).includes("ALL")));
	const ngx = svcs.find(([, s]) => /nginx/.test(s.image ?? ""));
	check(`${file}: nginx in front with docker/nginx.conf, depending on every replica`, !!ngx &&
	      (ngx[1].volumes ?? []).some((v) => v.startsWith("./nginx.conf:")) &&
	      reps.every(([name]) => (ngx[1].depends_on ?? []).includes(name)));
}

const objects = [];
for (const file of args) {
	const docs = parseAllDocuments(readFileSync(file, "utf8"));
	for (const d of docs) {
		if (d.errors.length) {
			check(`${file}: YAML parses`, false, d.errors.map((e) => e.message).join("\n"));
			continue;
		}
		const o = d.toJS();
		if (!o) continue;
		const where = `${file}: ${o.kind} ${o.metadata?.name}`;
		const mod = groups[o.apiVersion];
		let cls;
		try {
			cls = mod && (await import(mod))[o.kind];
		} catch (e) {
			cls = undefined;
		}
		if (!cls) {
			check(`${where}: known apiVersion/kind`, false, `${o.apiVersion} ${o.kind}`);
			continue;
		}
		try {
			new cls(o).validate();
			check(`${where}: valid against the ${o.apiVersion} ${o.kind} schema`, true);
		} catch (e) {
			check(`${where}: valid against the ${o.apiVersion} ${o.kind} schema`, false,
			      JSON.stringify(e.errors ?? e.message, null, 1));
		}
		objects.push({ file, o });
	}
}

const find = (kind, name) => objects.find(({ o }) => o.kind === kind && o.metadata?.name === name)?.o;
const matches = (sel, labels) => Object.entries(sel ?? {}).every(([k, v]) => labels?.[k] === v) &&
	Object.keys(sel ?? {}).length > 0;

// Sizes in bytes, NaN when not one. The two spellings disagree: the
// daemon's K/M/G (any case, "iB" optional: config_parse_size) are powers of
// 1024, where a Kubernetes quantity's k/M/G are powers of 1000 and only
// Ki/Mi/Gi are binary (a limit of "2G" is 2e9 bytes, not 2 GiB).
function daemonBytes(s) {
	const m = /^([0-9]+)(?:([kKmMgG])(?:[iI][bB])?)?$/.exec(String(s ?? ""));
	if (!m) return NaN;
	return Number(m[1]) * (m[2] ? 1024 ** (" kmg".indexOf(m[2].toLowerCase())) : 1);
}
function quantityBytes(s) {
	const m = /^([0-9]+)(k|M|G|T|Ki|Mi|Gi|Ti)?$/.exec(String(s ?? ""));
	if (!m) return NaN;
	const unit = { k: 1e3, M: 1e6, G: 1e9, T: 1e12, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, Ti: 1024 ** 4 };
	return Number(m[1]) * (m[2] ? unit[m[2]] : 1);
}

const dep = find("Deployment", "collisiond");
check("a Deployment named collisiond", !!dep);
if (dep) {
	const pod = dep.spec.template;
	const c = pod.spec.containers.find((x) => x.name === "collisiond");
	const sc = { ...(pod.spec.securityContext ?? {}), ...(c?.securityContext ?? {}) };
	check("Deployment: readiness probe on /readyz", c?.readinessProbe?.httpGet?.path === "/readyz");
	check("Deployment: liveness probe on /healthz", c?.livenessProbe?.httpGet?.path === "/healthz");
	check("Deployment: cpu and memory requests", !!(c?.resources?.requests?.cpu && c?.resources?.requests?.memory));
	check("Deployment: runs as non-root", sc.runAsNonRoot === true && sc.runAsUser !== 0);
	check("Deployment: read-only root file system", sc.readOnlyRootFilesystem === true);
	check("Deployment: no privilege escalation, all capabilities dropped",
	      sc.allowPrivilegeEscalation === false && (sc.capabilities?.drop ?? []).includes("ALL"));
	check("Deployment: selector matches its pods", matches(dep.spec.selector.matchLabels, pod.metadata.labels));
	check("Deployment: COLLISIOND_STORE is a redis:// URL",
	      (c?.env ?? []).some((e) => e.name === "COLLISIOND_STORE" && /^redis:\/\//.test(e.value ?? "")));
	check("Deployment: at least 2 replicas", (dep.spec.replicas ?? 1) >= 2);
	// the memory budget leaves room below the container's limit for the
	// requests in flight (README "Memory budget"): at most half of it
	const budget = daemonBytes((c?.env ?? []).find((e) => e.name === "COLLISIOND_MAX_MEMORY")?.value);
	const limit = quantityBytes(c?.resources?.limits?.memory);
	check("Deployment: COLLISIOND_MAX_MEMORY set, at most half the memory limit",
	      budget > 0 && limit > 0 && 2 * budget <= limit, `budget ${budget}, limit ${limit}`);
	// a Service named collisiond sets COLLISIOND_PORT=tcp://ip:port in
	// every pod through service links: the daemon would refuse it
	check("Deployment: service links off (no COLLISIOND_PORT=tcp://... from the Service)",
	      pod.spec.enableServiceLinks === false);
	const svc = find("Service", "collisiond");
	check("Service collisiond selects the Deployment's pods", !!svc && matches(svc.spec.selector, pod.metadata.labels));
	const pdb = objects.find(({ o }) => o.kind === "PodDisruptionBudget")?.o;
	check("PodDisruptionBudget selects the Deployment's pods and keeps one up",
	      !!pdb && matches(pdb.spec.selector.matchLabels, pod.metadata.labels) &&
	      ((pdb.spec.minAvailable ?? 0) >= 1 || pdb.spec.maxUnavailable !== undefined) &&
	      (pdb.spec.minAvailable ?? 0) < (dep.spec.replicas ?? 1));
}
const redis = find("StatefulSet", "redis");
check("a Redis StatefulSet with the append-only file on", !!redis &&
      redis.spec.template.spec.containers.some((x) => (x.args ?? []).join(" ").includes("--appendonly yes")));
if (redis) {
	const svc = find("Service", "redis");
	check("Service redis selects the StatefulSet's pods",
	      !!svc && matches(svc.spec.selector, redis.spec.template.metadata.labels));
}
console.log(`# ${n} checks, ${failed} failed`);
process.exit(failed ? 1 : 0);
