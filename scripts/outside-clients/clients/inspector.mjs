// The MCP Inspector's CLI (`mcp-inspector --cli`, npm @modelcontextprotocol/inspector 2.x): one process per
// method, `--format json -q`, which prints the MCP result as it came. Run in both protocol eras it offers
// (`--protocol-era legacy` and `modern`, i.e. 2026-07-28), each a row of its own. `tools/list --strict` is
// its tool-schema portability check (exit 6 on an error-severity problem): recorded as a row too.

import { execFile } from 'node:child_process';
import path from 'node:path';

const { driverEnv, exercise, packageVersion } = await import(process.env.SUPERPI_CHECKS ?? '');
const env = driverEnv();
const bin = path.join(process.cwd(), 'node_modules', '.bin', 'mcp-inspector');
const target = env.transport === 'stdio' ? ['--cwd', env.stdio.cwd, env.stdio.command, ...env.stdio.args] : [env.http];

/** One CLI run: resolves with its exit code, stdout and stderr (a tool's isError exits non-zero and still prints the result). */
function inspector(args) {
  return new Promise((resolve) => {
    execFile(bin, ['--cli', ...args, ...target], { maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => resolve({ code: err ? err.code ?? 1 : 0, stdout, stderr }));
  });
}

async function result(args) {
  const out = await inspector(['--format', 'json', '-q', ...args]);
  const json = out.stdout.trim().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l)).find((o) => 'result' in o);
  if (!json) throw new Error(`exit ${out.code}: ${(out.stderr || out.stdout).trim().slice(-300)}`);
  return json.result;
}

const version = await packageVersion('@modelcontextprotocol/inspector');
const strict = await inspector(['--format', 'json', '--method', 'tools/list', '--strict']);
const problems = strict.stderr.split('\n').filter((l) => /^(Error|Warning): /.test(l));
const portability = `tools/list --strict: exit ${strict.code}, ${problems.filter((l) => l.startsWith('Error')).length} errors, ${problems.filter((l) => l.startsWith('Warning')).length} warnings (${[...new Set(strict.stderr.split('\n').filter((l) => l.trim().startsWith('Path:')).map((l) => l.trim().slice(6)))].join('; ')})`;

process.stdout.write(`SUPERPI-RESULT ${JSON.stringify({ client: 'MCP Inspector CLI', version, transport: `${env.transport}, tools/list --strict`, rows: [{ check: 'schema portability', ok: strict.code === 0, detail: portability }] })}\n`);
for (const era of ['legacy', 'modern']) {
  await exercise({
    listTools: async () => (await result(['--protocol-era', era, '--method', 'tools/list'])).tools,
    call: (name, args) => result(['--protocol-era', era, '--method', 'tools/call', '--tool-name', name, '--tool-args-json', JSON.stringify(args)]),
    close: async () => {},
  }, { client: 'MCP Inspector CLI', version, transport: `${env.transport}, ${era === 'modern' ? '2026-07-28' : '2025-11-25'}` });
}
