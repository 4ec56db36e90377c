/**
 * `npm run bench`: runs the benchmarks on the test control plane and writes their figures, each
 * with its median and spread, to test/bench/results/latest.json and latest.md.
 *
 *   npm run bench                      # everything
 *   npm run bench -- api latency       # some of: api, throughput, latency, memory, run-restart,
 *                                      # footprint, side-by-side, git, health, cli, isolation, ui, locks,
 *                                      # sources
 *   npm run bench -- flags             # only when named: the long-running Node flags weighed
 *
 * side-by-side also runs the Go operator when JANUS_PRIOR_ART_SRC names its source (side-by-side.ts);
 * without it, and for flags with JANUS_BENCH_FLAG_SETS, the figures go to a section of their own.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { useScratchTmp } from '../support/scratch-tmp.ts';
import { apiCost } from './api-cost.ts';
import { cli } from './cli.ts';
import { footprint } from './footprint.ts';
import { gitLatency } from './git-latency.ts';
import { gitPoll } from './git-poll.ts';
import { startBench } from './harness.ts';
import { healthAnalysis } from './health-analysis.ts';
import { healthGate } from './health-gate.ts';
import { isolation } from './isolation.ts';
import { latency } from './latency.ts';
import { locks } from './locks.ts';
import { memory } from './memory.ts';
import { nodeFlagsTrade } from './node-flags-trade.ts';
import { resultsPush } from './results-push.ts';
import { runRestart } from './run-restart.ts';
import { outcomeFigures, sideBySideJanus, sideBySidePriorArt } from './side-by-side.ts';
import { sources } from './sources.ts';
import { type Figure, show } from './stats.ts';
import { throughput } from './throughput.ts';
import { ui } from './ui.ts';

const ALL = [
  'api',
  'throughput',
  'latency',
  'memory',
  'run-restart',
  'footprint',
  'side-by-side',
  'git',
  'health',
  'cli',
  'isolation',
  'ui',
  'locks',
  'sources',
] as const;
const chosen = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const selected = chosen.length > 0 ? chosen : [...ALL];

// A partial run writes a section of its own, so that it does not replace the whole one in latest.*.
const priorArt = process.env.JANUS_PRIOR_ART_SRC;
const sideBySideSection = priorArt ? 'Side by side with the Go operator' : 'Side by side: Janus alone';
const flagSets = process.env.JANUS_BENCH_FLAG_SETS;
const flagsSection = `Node flags of the long-running processes${flagSets ? ` (${flagSets.split('|').join(', ')})` : ''}`;

const results: Record<string, Record<string, Figure>> = {};
const removeScratch = useScratchTmp('bench');
const bench = await startBench();
try {
  if (selected.includes('api')) results['API requests'] = await apiCost(bench, 3);
  if (selected.includes('throughput')) results.Throughput = await throughput(bench, 5);
  if (selected.includes('latency')) results.Latency = await latency(bench, 7);
  if (selected.includes('memory')) results.Memory = await memory(bench, 3);
  if (selected.includes('run-restart')) results['Restart of janus run'] = await runRestart(bench, 3);
  if (selected.includes('footprint')) results['History and retention'] = await footprint(bench);
  if (selected.includes('side-by-side'))
    results[sideBySideSection] = outcomeFigures('Janus', await sideBySideJanus(bench));
  if (selected.includes('health')) results['Health gate'] = await healthGate(bench, 3);
  if (selected.includes('health')) results['Bake window and analysis'] = await healthAnalysis(bench, 3);
  if (selected.includes('cli')) results['Where people wait: the CLI and big commits'] = await cli(bench, 5);
  if (selected.includes('flags')) results[flagsSection] = await nodeFlagsTrade(bench, 3);
  if (selected.includes('isolation')) results['One tenant beside another'] = await isolation(bench, 5);
  if (selected.includes('ui')) results['The web view (janus ui)'] = await ui(bench, 5);
  if (selected.includes('locks')) results['Locks that block: the cost of a write'] = await locks(bench, 5);
  if (selected.includes('sources')) results['Sources: a 500-object chart'] = await sources(bench, 3);
  if (selected.includes('git'))
    results.Git = {
      ...(await gitPoll(5)),
      ...(await resultsPush(5)),
      ...(await gitLatency(bench, 5)),
    };
} finally {
  await bench.close();
}
// On a control plane of its own, once Janus's has stopped: both CRDs are named transactions.tx.janus.io.
if (selected.includes('side-by-side') && priorArt)
  Object.assign(
    results[sideBySideSection] ?? {},
    outcomeFigures('Go operator', await sideBySidePriorArt(priorArt)),
  );
removeScratch();

const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, ${execFileSync('uname', ['-sr'], { encoding: 'utf8' }).trim()}`;
const at = new Date().toISOString();
const dir = new URL('./results/', import.meta.url);
const jsonFile = new URL('latest.json', dir);
// Sections run separately keep their own date; the others stay as they were.
type Section = { at: string; machine: string; figures: Record<string, Figure> };
const previous: Record<string, Section> = existsSync(jsonFile)
  ? (JSON.parse(readFileSync(jsonFile, 'utf8')).sections ?? {})
  : {};
const sections: Record<string, Section> = { ...previous };
for (const [name, figures] of Object.entries(results)) sections[name] = { at, machine, figures };
const lines = ['# Janus benchmarks', '', '| figure | median (min–max, runs) |', '|---|---|'];
for (const [name, section] of Object.entries(sections)) {
  lines.push(`| **${name}** (${section.at.slice(0, 16).replace('T', ' ')} UTC) | |`);
  for (const [figureName, f] of Object.entries(section.figures)) lines.push(`| ${figureName} | ${show(f)} |`);
}
lines.push('', `Machine: ${machine}.`);
writeFileSync(jsonFile, `${JSON.stringify({ sections }, null, 2)}\n`);
writeFileSync(new URL('latest.md', dir), `${lines.join('\n')}\n`);
process.stderr.write(`${lines.join('\n')}\n`);
