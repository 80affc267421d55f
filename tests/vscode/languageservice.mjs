// Drive vscode-json-languageservice, the engine of VS Code's JSON support, with specfmt's
// exported schemas: diagnostics, completion and hover for many documents in one process.
//
//   node tests/vscode/languageservice.mjs JOBS.json
//
// JOBS.json (written by tests/test_vscode.py):
//   {"documents": [{"uri": "file:///.../config.json", "schema": "/path/speculators.schema.json",
//                   "text": "...", "locate": ["/json/pointer", ...],
//                   "complete": [offset, ...], "hover": [offset, ...]}, ...]}
// Each document is associated with its schema the way the `json.schemas` setting does it (a
// fileMatch on the document's path); the schema is read from disk by the service itself.
// Prints, per document: diagnostics (message, severity, [start, end) offsets), the key and
// value ranges of each located pointer (jsonc-parser), completion items (label,
// documentation) and hover texts. Exit status: 0, or 2 on usage errors.
import { readFile } from "node:fs/promises";
import { fileURLToPath, pathToFileURL } from "node:url";
import { getLanguageService } from "vscode-json-languageservice";
import { TextDocument } from "vscode-languageserver-textdocument";
import { parseTree, findNodeAtLocation } from "jsonc-parser";

const [jobsPath] = process.argv.slice(2);
if (!jobsPath) {
  console.error("usage: node tests/vscode/languageservice.mjs JOBS.json");
  process.exit(2);
}
const { documents } = JSON.parse(await readFile(jobsPath, "utf8"));

const service = getLanguageService({
  schemaRequestService: async (uri) => readFile(fileURLToPath(uri), "utf8"),
});
const associations = new Map(); // schema URI -> document paths
for (const d of documents) {
  const schemaUri = pathToFileURL(d.schema).href;
  if (!associations.has(schemaUri)) associations.set(schemaUri, []);
  associations.get(schemaUri).push(new URL(d.uri).pathname);
}
service.configure({
  validate: true,
  allowComments: false,
  schemas: [...associations].map(([uri, fileMatch]) => ({ uri, fileMatch })),
});

const decodePointer = (pointer) =>
  pointer === "" ? [] : pointer.split("/").slice(1).map((t) => t.replace(/~1/g, "/").replace(/~0/g, "~"));
const span = (node) => (node ? [node.offset, node.offset + node.length] : null);
const docText = (documentation) => (typeof documentation === "string" ? documentation : documentation?.value ?? "");
const hoverText = (contents) =>
  (Array.isArray(contents) ? contents : [contents]).map((c) => (typeof c === "string" ? c : c.value)).join("\n\n");

const results = [];
for (const d of documents) {
  const doc = TextDocument.create(d.uri, "json", 1, d.text);
  const json = service.parseJSONDocument(doc);
  const diagnostics = (await service.doValidation(doc, json)).map((x) => ({
    message: x.message,
    severity: x.severity,
    range: [doc.offsetAt(x.range.start), doc.offsetAt(x.range.end)],
  }));
  const tree = parseTree(d.text);
  const located = {};
  for (const pointer of d.locate ?? []) {
    const path = decodePointer(pointer).map((t) => (/^\d+$/.test(t) ? Number(t) : t));
    const value = findNodeAtLocation(tree, path);
    const key = value?.parent?.type === "property" ? value.parent.children[0] : null;
    located[pointer] = { key: span(key), value: span(value) };
  }
  const completions = [];
  for (const offset of d.complete ?? []) {
    const list = await service.doComplete(doc, doc.positionAt(offset), json);
    completions.push((list?.items ?? []).map((i) => ({ label: i.label, documentation: docText(i.documentation) })));
  }
  const hovers = [];
  for (const offset of d.hover ?? []) {
    const hover = await service.doHover(doc, doc.positionAt(offset), json);
    hovers.push(hover ? hoverText(hover.contents) : null);
  }
  results.push({ uri: d.uri, diagnostics, located, completions, hovers });
}
process.stdout.write(JSON.stringify(results) + "\n");
