// Validate specfmt's exported JSON Schemas with Ajv (a second, independent validator).
//
//   node tests/ajv/check-fixtures.mjs [--schemas DIR] [--manifest FILE] [--json]
//
// Ajv runs in strict mode (unknown keywords, ignored keywords, type-specific keywords without
// their type and the like are errors, so a schema that only works because the Python
// validator is lenient fails here; see makeAjv for the two adjustments). The x-*
// extensions and OpenAPI's `discriminator` are declared as annotation keywords. Each
// instance is checked against its version's root schema and, when its type is known, the
// type's own schema, in both dialects (2020-12 with Ajv2020, draft-07 with Ajv).
//
// Without --manifest the fixtures are found on disk: examples/*/config.json and
// tests/fixtures/valid/*.json must pass, and every case in tests/fixtures/invalid/ whose
// "expect" names a schema-layer rule (S1xx) must fail, against the newest version (or the
// case's options.format_version). tests/test_ajv_agreement.py passes a manifest instead,
// with the version and type specfmt itself chose for each file, and compares verdicts.
//
// Exit status: 0 when every expectation holds, 1 otherwise, 2 on usage errors.
import { readFileSync, readdirSync, existsSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import Ajv2020 from "ajv/dist/2020.js";
import AjvDraft07 from "ajv";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const args = process.argv.slice(2);
const option = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const schemaDir = path.resolve(option("--schemas") ?? path.join(ROOT, "generated", "schemas"));
const manifestPath = option("--manifest");
const asJson = args.includes("--json");

const readJson = (file) => JSON.parse(readFileSync(file, "utf8"));
const listDir = (dir) => (existsSync(dir) ? readdirSync(dir).sort() : []);

// -- schemas -----------------------------------------------------------------------------
function extensionKeywords(node, found = new Set()) {
  if (Array.isArray(node)) node.forEach((x) => extensionKeywords(x, found));
  else if (node && typeof node === "object") {
    for (const [key, value] of Object.entries(node)) {
      if (key.startsWith("x-")) found.add(key);
      else extensionKeywords(value, found);
    }
  }
  return found;
}

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
  for (const [dialect, sub] of [["2020-12", ""], ["07", "draft-07"]]) {
    const dir = path.join(schemaDir, version, sub);
    for (const file of listDir(dir).filter((f) => f.endsWith(".schema.json"))) {
      documents.push({ version, dialect, name: file.replace(".schema.json", ""), schema: readJson(path.join(dir, file)) });
    }
  }
}
const keywords = new Set(["discriminator"]);
documents.forEach((d) => extensionKeywords(d.schema, keywords));

// strict: true turns on every strict-mode check (strictRequired included); union types
// ("type": ["integer", "null"]) are allowed, as JSON Schema allows them.
function makeAjv(Klass) {
  const ajv = new Klass({ strict: true, allowUnionTypes: true, allErrors: true });
  for (const keyword of keywords) ajv.addKeyword({ keyword, schemaType: ["object", "string", "array", "boolean", "number", "null"] });
  return ajv;
}
const engines = { "2020-12": makeAjv(Ajv2020), "07": makeAjv(AjvDraft07) };
const compiled = new Map(); // `${version}|${dialect}|${name}` -> validate function
let compileFailures = 0;
for (const d of documents) {
  try {
    compiled.set(`${d.version}|${d.dialect}|${d.name}`, engines[d.dialect].compile(d.schema));
  } catch (err) {
    compileFailures += 1;
    console.error(`strict Ajv refuses ${d.version}/${d.dialect === "07" ? "draft-07/" : ""}${d.name}: ${err.message}`);
  }
}
if (compileFailures) process.exit(1);
const rootName = (version) => (compiled.has(`${version}|2020-12|speculators`) ? "speculators" : null);

// -- instances -----------------------------------------------------------------------------
function discover() {
  const items = [];
  for (const dir of listDir(path.join(ROOT, "examples"))) {
    const file = path.join(ROOT, "examples", dir, "config.json");
    if (existsSync(file)) items.push({ file, expect_valid: true });
  }
  for (const f of listDir(path.join(ROOT, "tests", "fixtures", "valid")).filter((f) => f.endsWith(".json"))) {
    items.push({ file: path.join(ROOT, "tests", "fixtures", "valid", f), expect_valid: true });
  }
  const invalid = path.join(ROOT, "tests", "fixtures", "invalid");
  for (const rule of listDir(invalid)) {
    for (const f of listDir(path.join(invalid, rule)).filter((f) => f.endsWith(".json"))) {
      const file = path.join(invalid, rule, f);
      const kase = readJson(file);
      if (!(kase.expect ?? []).some((id) => id.startsWith("S1"))) continue;
      items.push({ file, wrapped: true, expect_valid: false, version: kase.options?.format_version });
    }
  }
  return items;
}

function errorsOf(validate) {
  return (validate.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message}`);
}

const items = manifestPath ? readJson(manifestPath) : discover();
const results = [];
let failures = 0;
for (const item of items) {
  const raw = readJson(item.file);
  const config = item.wrapped ? raw.config : raw;
  const version = item.version ?? newest;
  const type = item.type ?? (typeof config?.speculators_model_type === "string" ? config.speculators_model_type : null);
  const verdicts = {};
  for (const dialect of ["2020-12", "07"]) {
    const suffix = dialect === "07" ? "_07" : "";
    const root = rootName(version) && compiled.get(`${version}|${dialect}|${rootName(version)}`);
    if (root) verdicts[`root${suffix}`] = { valid: root(config), errors: errorsOf(root) };
    const typed = type && compiled.get(`${version}|${dialect}|${type}`);
    if (typed) verdicts[`typed${suffix}`] = { valid: typed(config), errors: errorsOf(typed) };
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
else console.log(`${results.length - failures} passed, ${failures} failed`);
process.exitCode = failures ? 1 : 0;
