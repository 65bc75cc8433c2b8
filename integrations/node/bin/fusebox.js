#!/usr/bin/env node
// bin/fusebox.js - `npx fusebox ...`: runs the fusebox binary of the
// platform package (fusebox-linux-x64, an optional dependency), or the one
// $FUSEBOX_BINARY names, with the same arguments, and exits as it does.
// No postinstall: the binary is found here, when it is run.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';

function binary() {
  if (process.env.FUSEBOX_BINARY) return process.env.FUSEBOX_BINARY;
  const pkg = `fusebox-${process.platform}-${process.arch}`;
  try {
    const p = createRequire(import.meta.url).resolve(`${pkg}/bin/fusebox`);
    if (existsSync(p)) return p;
  } catch { /* not installed */ }
  process.stderr.write(`fusebox: no binary for ${process.platform}-${process.arch}: the optional package ${pkg} `
    + 'is not installed (npm install it, or set FUSEBOX_BINARY to a fusebox binary)\n');
  process.exit(2);
}

const exe = binary();
const r = spawnSync(exe, process.argv.slice(2), { stdio: 'inherit' });
if (r.error) {
  process.stderr.write(`fusebox: cannot run ${exe}: ${r.error.message}\n`);
  process.exit(2);
}
if (r.signal) process.kill(process.pid, r.signal);
process.exit(r.status ?? 2);
