// What the validator scripts beside this file share: the exported schemas, the fixtures
// (found on disk or listed in a manifest), and the loop that checks each fixture against its
// version's root schema and its type's own schema, in both dialects.
//
// A script calls check({ name: compile, ... }), one entry per engine configuration, where
// compile(documents) returns a Map from `${version}|${dialect}|${name}` to an (async or plain)
// function config -> {valid, errors}. Verdicts are keyed `${engine}/${which}`, which being
// root, typed (2020-12), root_07, typed_07 (draft-07).
//
// Options: --schemas DIR (default generated/schemas), --manifest FILE (what
// tests/test_validator_agreement.py writes: file, wrapped, version, type, expect_valid per
// fixture), --json (print every verdict). Without --manifest the fixtures are found on disk:
// examples/*/config.json, tests/fixtures/valid/*.json and tests/fixtures/releases/<version>/
// <type>/*.json must pass, and every failing config case of tests/rules/cases/<ID>.json that
// names a schema-layer rule (S1xx, its rule or "also") must fail, at the newest version (or
// the release folder's version, or the case's options.format_version).
//
// Exit status: 0 when every expectation holds, 1 otherwise, 2 on usage errors.
import { readFileSync, readdirSync, existsSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const args = process.argv.slice(2);
const option = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
export const schemaDir = path.resolve(option("--schemas") ?? path.join(ROOT, "generated", "schemas"));
const manifestPath = option("--manifest");
const asJson = args.includes("--json");

export const readJson = (file) => JSON.parse(readFileSync(file, "utf8"));
const listDir = (dir) => (existsSync(dir) ? readdirSync(dir).sort() : []);
export const DIALECTS = [["2020-12", ""], ["07", "draft-07"]];

/** Every exported schema: {version, dialect, name, schema}, plus the newest version. */
export function loadDocuments() {
  const versions = listDir(schemaDir).filter((v) => statSync(path.join(schemaDir, v)).isDirectory());
  if (versions.length === 0) {
    console.error(`no exported schemas under ${schemaDir}; run \`python scripts/generate.py\``);
    process.exit(2);
  }
  const newest = [...versions].sort((a, b) => {
    const [x, y] = [a.split(".").map(Number), b.split(".").map(Number)];
    return x[0] - y[0] || x[1] - y[1];
  })[versions.length - 1];
  const documents = [];
  for (const version of versions) {
    for (const [dialect, sub] of DIALECTS) {
      const dir = path.join(schemaDir, version, sub);
      for (const file of listDir(dir).filter((f) => f.endsWith(".schema.json"))) {
        documents.push({ version, dialect, name: file.replace(".schema.json", ""), schema: readJson(path.join(dir, file)) });
      }
    }
  }
  return { documents, newest };
}

function discover() {
  const items = [];
  for (const dir of listDir(path.join(ROOT, "examples"))) {
    const file = path.join(ROOT, "examples", dir, "config.json");
    if (existsSync(file)) items.push({ file, expect_valid: true });
  }
  for (const f of listDir(path.join(ROOT, "tests", "fixtures", "valid")).filter((f) => f.endsWith(".json"))) {
    items.push({ file: path.join(ROOT, "tests", "fixtures", "valid", f), expect_valid: true });
  }
  const releases = path.join(ROOT, "tests", "fixtures", "releases");
  for (const version of listDir(releases)) {
    for (const type of listDir(path.join(releases, version))) {
      for (const f of listDir(path.join(releases, version, type)).filter((f) => f.endsWith(".json"))) {
        items.push({ file: path.join(releases, version, type, f), expect_valid: true, version });
      }
    }
  }
  // the rule cases (tests/rules/cases/<ID>.json): a failing whole config of a schema-layer rule
  const cases = path.join(ROOT, "tests", "rules", "cases");
  for (const f of listDir(cases).filter((f) => f.endsWith(".json"))) {
    const { rule, cases: list } = readJson(path.join(cases, f));
    for (const kase of list) {
      const rules = [rule, ...(kase.also ?? [])];
      if (kase.expect !== "fail" || !kase.config || kase.command || kase.checkpoint || kase.verifier) continue;
      if (!rules.some((id) => id.startsWith("S1"))) continue;
      const file = `${path.join(cases, f)}#${kase.name}`;
      items.push({ file, inline: kase.config, expect_valid: false, version: kase.options?.format_version });
    }
  }
  return items;
}

/** Check every fixture with each engine; sets the exit code, prints a summary or --json. */
export async function check(engines) {
  const { documents, newest } = loadDocuments();
  const compiled = {};
  for (const [engine, compile] of Object.entries(engines)) compiled[engine] = await compile(documents);
  const items = manifestPath ? readJson(manifestPath) : discover();
  const results = [];
  let failures = 0;
  for (const item of items) {
    const raw = item.inline ?? readJson(item.file);
    const config = item.wrapped ? raw.config : raw;
    const version = item.version ?? newest;
    const type = item.type ?? (typeof config?.speculators_model_type === "string" ? config.speculators_model_type : null);
    const verdicts = {};
    for (const [engine, schemas] of Object.entries(compiled)) {
      for (const [dialect] of DIALECTS) {
        const suffix = dialect === "07" ? "_07" : "";
        const root = schemas.get(`${version}|${dialect}|speculators`);
        if (root) verdicts[`${engine}/root${suffix}`] = await root(config);
        const typed = type && schemas.get(`${version}|${dialect}|${type}`);
        if (typed) verdicts[`${engine}/typed${suffix}`] = await typed(config);
      }
    }
    const result = { file: path.relative(ROOT, item.file), version, model_type: type, verdicts };
    results.push(result);
    if (item.expect_valid !== undefined) {
      const wrong = Object.entries(verdicts).filter(([, v]) => v.valid !== item.expect_valid);
      if (wrong.length) {
        failures += 1;
        if (!asJson) {
          console.log(`FAIL ${result.file}: expected ${item.expect_valid ? "valid" : "invalid"} (format ${version})`);
          for (const [which, v] of wrong) console.log(`  ${which}: ${v.valid ? "valid" : v.errors.join("; ")}`);
        }
      }
    }
  }
  // exitCode, not process.exit(): exit() would cut off output still queued for a pipe
  if (asJson) process.stdout.write(JSON.stringify(results, null, 2) + "\n");
  else console.log(`${Object.keys(engines).join(", ")}: ${results.length - failures} passed, ${failures} failed`);
  process.exitCode = failures ? 1 : 0;
}
