/**
 * The order test files start in: within a tier, the longest first, so the last to finish is a
 * short one and no worker idles while one long file runs alone at the end (a crash tier whose
 * 100-second bake-window file started a minute late took a minute longer).
 *
 * vitest orders by the durations it cached on this machine, and without them (a clean clone, as
 * CI has) by file size, which says little about how long a file waits on real rollouts. So a
 * file's expected duration is vitest's cached one when there is one, else the one recorded in
 * test/durations.json (written by .ci/tiers.ts at the end of every CI run), else unknown: unknown
 * files go first, as vitest runs them, since nothing says they are short.
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const RECORDED_FILE = new URL('../durations.json', import.meta.url);

/** Seconds per test file (a path from the repository's root), as test/durations.json holds them. */
export type RecordedDurations = Record<string, number>;

function recorded(): RecordedDurations {
  try {
    const parsed = JSON.parse(readFileSync(RECORDED_FILE, 'utf8')) as { files?: RecordedDurations };
    return parsed.files ?? {};
  } catch {
    return {}; // no record: vitest's own order
  }
}

export class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const seconds = recorded();
    const root = this.ctx.config.root;
    const expectedMs = (spec: TestSpecification): number => {
      const cached = this.ctx.cache.getTestSpecificationResult(spec);
      if (cached) return cached.duration;
      const figure = seconds[relative(root, spec.moduleId)];
      return figure === undefined ? Number.POSITIVE_INFINITY : figure * 1000;
    };
    const failed = (spec: TestSpecification) =>
      this.ctx.cache.getTestSpecificationResult(spec)?.failed === true;
    const expected = new Map(files.map((spec) => [spec, expectedMs(spec)]));
    return [...files].sort(
      (a, b) =>
        a.project.config.sequence.groupOrder - b.project.config.sequence.groupOrder ||
        a.project.name.localeCompare(b.project.name) ||
        Number(failed(b)) - Number(failed(a)) ||
        (expected.get(b) ?? 0) - (expected.get(a) ?? 0) ||
        a.moduleId.localeCompare(b.moduleId),
    );
  }
}
