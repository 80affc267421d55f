// Validate specfmt's exported JSON Schemas with @hyperjump/json-schema, an implementation
// by a member of the JSON Schema specification team, independent of Ajv and jsonschema-rs.
//
//   node tests/validators/hyperjump.mjs [--schemas DIR] [--manifest FILE] [--json]
//
// Every exported file is registered under its $id (nothing is fetched: each file is
// self-contained and the meta-schemas ship with the package). Fixtures, options and exit
// status: see common.mjs.
import { registerSchema, validate } from "@hyperjump/json-schema/draft-2020-12";
import { BASIC } from "@hyperjump/json-schema/experimental";
import "@hyperjump/json-schema/draft-07";
import { check } from "./common.mjs";

const errorsOf = (output) =>
  (output.errors ?? []).map((e) => `${e.instanceLocation || "#"} ${e.keyword ?? ""} ${e.absoluteKeywordLocation ?? ""}`.trim());

async function compile(documents) {
  const compiled = new Map();
  for (const d of documents) registerSchema(d.schema);
  for (const d of documents) {
    const validator = await validate(d.schema.$id);
    compiled.set(`${d.version}|${d.dialect}|${d.name}`, (config) => {
      const output = validator(config, BASIC);
      return { valid: output.valid, errors: output.valid ? [] : errorsOf(output) };
    });
  }
  return compiled;
}

await check({ hyperjump: compile });
