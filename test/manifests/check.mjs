// A tiny named-check runner shared by the manifest and Dockerfile scripts.
let failures = 0;

export function check(name, fn) {
  try {
    fn();
    console.log(`ok   ${name}`);
  } catch (e) {
    failures++;
    console.log(`FAIL ${name}\n     ${e.message.split("\n").join("\n     ")}`);
  }
}

// Prints the summary and exits 0 only when every check passed.
export function finish(what) {
  console.log(failures === 0 ? `all ${what} checks passed` : `${failures} ${what} check(s) failed`);
  process.exit(failures === 0 ? 0 : 1);
}
