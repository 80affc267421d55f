// Validate specfmt's exported JSON Schemas with Ajv, in two configurations: plain, and with
// its `discriminator` option (which would validate an OpenAPI discriminator keyword; the
// exports must compile under it too).
//
//   node tests/validators/ajv.mjs [--schemas DIR] [--manifest FILE] [--json]
//
// Ajv runs in strict mode: unknown keywords, ignored keywords, type-specific keywords without
// their type and the like are errors, so a schema that only works because the Python
// validator is lenient fails here. Only the x-* extensions are declared (as annotations);
// union types ("type": ["integer", "null"]) are allowed, as JSON Schema allows them.
// Fixtures, options and exit status: see common.mjs.
import Ajv2020 from "ajv/dist/2020.js";
import AjvDraft07 from "ajv";
import { check } from "./common.mjs";

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

const errorsOf = (validate) => (validate.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message}`);

function compiler(options) {
  return (documents) => {
    const keywords = new Set();
    documents.forEach((d) => extensionKeywords(d.schema, keywords));
    const make = (Klass) => {
      const ajv = new Klass({ strict: true, allowUnionTypes: true, allErrors: true, ...options });
      for (const keyword of keywords) ajv.addKeyword({ keyword, schemaType: ["object", "string", "array", "boolean", "number", "null"] });
      return ajv;
    };
    const engines = { "2020-12": make(Ajv2020), "07": make(AjvDraft07) };
    const compiled = new Map();
    let failures = 0;
    for (const d of documents) {
      try {
        const validate = engines[d.dialect].compile(d.schema);
        compiled.set(`${d.version}|${d.dialect}|${d.name}`, (config) => ({ valid: validate(config), errors: errorsOf(validate) }));
      } catch (err) {
        failures += 1;
        const where = `${d.version}/${d.dialect === "07" ? "draft-07/" : ""}${d.name}`;
        console.error(`strict Ajv${options.discriminator ? " (discriminator: true)" : ""} refuses ${where}: ${err.message}`);
      }
    }
    if (failures) process.exit(1);
    return compiled;
  };
}

await check({ ajv: compiler({}), "ajv-discriminator": compiler({ discriminator: true }) });
