/**
 * The end of a CI run (.ci/run): reads each tier's vitest JSON report, prints the 15 slowest test
 * files, each tier's wall time against its budget and the Go builds' times on stderr, writes the
 * same as Markdown to <dir>/ci-durations.md (for test/bench/results/ci.md), every file's duration
 * to <dir>/test-durations.json (the format of test/durations.json, which orders the files of the
 * next runs longest first: test/support/longest-first.ts), and prints the line
 * CI reads, "N passed, N failed", on stdout. Exits 1 when a tier is over its budget, naming the
 * tier and its slowest files, or when any test failed.
 *
 * Usage: node .ci/tiers.ts <report dir> <budgets.json>
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

interface FileResult {
  name: string;
  status: string;
  startTime: number;
  endTime: number;
  assertionResults: Array<{ status: string }>;
}

interface Report {
  success: boolean;
  startTime: number;
  numPassedTests: number;
  numFailedTests: number;
  testResults: FileResult[];
}

interface Tier {
  name: string;
  report: Report | undefined;
  passed: number;
  failed: number;
  seconds: number;
  budget: number | undefined;
}

const DURATIONS_COMMENT =
  'Seconds each test file took in a CI run (.ci/tiers.ts writes them to .tmp/test-durations.json): test/support/longest-first.ts starts the longest first. Refresh by copying that file here after a run where files changed much.';

const [dir = '.tmp', budgetsFile = '.ci/budgets.json'] = process.argv.slice(2);
const budgets = JSON.parse(readFileSync(budgetsFile, 'utf8')) as Record<string, number | string>;
const ranFile = join(dir, 'ci-tiers.txt');
const ran = existsSync(ranFile) ? readFileSync(ranFile, 'utf8').split('\n').filter(Boolean) : [];
const repo = `${process.cwd()}/`;

function readTier(name: string): Tier {
  const path = join(dir, `vitest-${name}.json`);
  const budget = typeof budgets[name] === 'number' ? budgets[name] : undefined;
  if (!existsSync(path)) return { name, report: undefined, passed: 0, failed: 1, seconds: 0, budget };
  const report = JSON.parse(readFileSync(path, 'utf8')) as Report;
  // A file that failed outside its tests (an import, a hook) counts as one failure.
  const broken = report.testResults.filter(
    (f) => f.status === 'failed' && !f.assertionResults.some((t) => t.status === 'failed'),
  ).length;
  const counted = report.numFailedTests + broken;
  const failed = counted + (report.success || counted > 0 ? 0 : 1);
  const end = Math.max(report.startTime, ...report.testResults.map((f) => f.endTime));
  return {
    name,
    report,
    passed: report.numPassedTests,
    failed,
    seconds: (end - report.startTime) / 1000,
    budget,
  };
}

const tiers = ran.map(readTier);
const files = tiers
  .flatMap((t) =>
    (t.report?.testResults ?? []).map((f) => ({
      tier: t.name,
      file: f.name.replace(repo, ''),
      seconds: (f.endTime - f.startTime) / 1000,
    })),
  )
  .sort((a, b) => b.seconds - a.seconds);

const lines: string[] = [];
lines.push('| slowest test files | tier | seconds |', '|---|---|---|');
for (const f of files.slice(0, 15)) lines.push(`| ${f.file} | ${f.tier} | ${f.seconds.toFixed(1)} |`);
lines.push('', '| tier | tests passed | failed | wall seconds | budget |', '|---|---|---|---|---|');
for (const t of tiers) {
  lines.push(`| ${t.name} | ${t.passed} | ${t.failed} | ${t.seconds.toFixed(0)} | ${t.budget ?? '—'} |`);
}
const buildsFile = join(dir, 'ci-builds.tsv');
if (existsSync(buildsFile)) {
  lines.push('', '| Go build | seconds |', '|---|---|');
  for (const row of readFileSync(buildsFile, 'utf8').split('\n').filter(Boolean)) {
    const [name, seconds] = row.split('\t');
    lines.push(`| ${name} | ${seconds} |`);
  }
}
const table = lines.join('\n');
const durations = Object.fromEntries(
  [...files]
    .sort((a, b) => a.file.localeCompare(b.file))
    .map((f) => [f.file, Math.max(1, Math.round(f.seconds))]),
);
writeFileSync(
  join(dir, 'test-durations.json'),
  `${JSON.stringify({ $comment: DURATIONS_COMMENT, files: durations }, null, 2)}\n`,
);
writeFileSync(join(dir, 'ci-durations.md'), `${table}\n`);
console.error(`\n${table}\n`);

const over = tiers.filter((t) => t.budget !== undefined && t.seconds > t.budget);
for (const t of over) {
  const slowest = files
    .filter((f) => f.tier === t.name)
    .slice(0, 5)
    .map((f) => `${f.file} (${f.seconds.toFixed(0)} s)`);
  console.error(
    `ci: tier ${t.name} took ${t.seconds.toFixed(0)} s, over its budget of ${t.budget} s (.ci/budgets.json); its slowest files: ${slowest.join(', ')}`,
  );
}

const passed = tiers.reduce((n, t) => n + t.passed, 0);
const failed = tiers.reduce((n, t) => n + t.failed, 0) + (ran.length === 0 ? 1 : 0);
process.stdout.write(`${passed} passed, ${failed} failed\n`);
process.exitCode = failed > 0 || over.length > 0 ? 1 : 0;
