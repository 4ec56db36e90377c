/**
 * `npm run bench`: runs the benchmarks on the test control plane and writes their figures, each
 * with its median and spread, to test/bench/results/latest.json and latest.md.
 *
 *   npm run bench                      # everything
 *   npm run bench -- api latency       # some of: api, throughput, latency, memory
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { apiCost } from './api-cost.ts';
import { startBench } from './harness.ts';
import { latency } from './latency.ts';
import { memory } from './memory.ts';
import { type Figure, show } from './stats.ts';
import { throughput } from './throughput.ts';

const ALL = ['api', 'throughput', 'latency', 'memory'] as const;
const chosen = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const selected = chosen.length > 0 ? chosen : [...ALL];

const results: Record<string, Record<string, Figure>> = {};
const bench = await startBench();
try {
  if (selected.includes('api')) results['API requests'] = await apiCost(bench, 3);
  if (selected.includes('throughput')) results.Throughput = await throughput(bench, 3);
  if (selected.includes('latency')) results.Latency = await latency(bench, 7);
  if (selected.includes('memory')) results.Memory = await memory(bench, 3);
} finally {
  await bench.close();
}

const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, ${execFileSync('uname', ['-sr'], { encoding: 'utf8' }).trim()}`;
const at = new Date().toISOString();
const lines = [
  `# Janus benchmarks`,
  '',
  `${at} on ${machine}.`,
  '',
  '| figure | median (min–max, runs) |',
  '|---|---|',
];
for (const [section, figures] of Object.entries(results)) {
  lines.push(`| **${section}** | |`);
  for (const [name, f] of Object.entries(figures)) lines.push(`| ${name} | ${show(f)} |`);
}
const dir = new URL('./results/', import.meta.url);
writeFileSync(new URL('latest.json', dir), `${JSON.stringify({ at, machine, results }, null, 2)}\n`);
writeFileSync(new URL('latest.md', dir), `${lines.join('\n')}\n`);
process.stderr.write(`${lines.join('\n')}\n`);
