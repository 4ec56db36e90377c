/**
 * Reading the Dockerfile as Docker would, enough to rebuild the runtime image's file set without
 * a Docker engine: stages, COPY lines, ENTRYPOINT and CMD, and what .dockerignore lets in.
 */

export interface Copy {
  /** The stage copied from, for COPY --from=<stage>. */
  from: string | undefined;
  sources: string[];
  destination: string;
}

export interface Stage {
  base: string;
  name: string | undefined;
  instructions: { keyword: string; args: string }[];
}

export interface Dockerfile {
  args: Record<string, string>;
  stages: Stage[];
}

/** Instructions with line continuations joined and comments dropped. */
function instructions(text: string): { keyword: string; args: string }[] {
  const joined = text.replace(/\\\n/g, ' ');
  return joined
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const [keyword = '', ...rest] = line.split(/\s+/);
      return { keyword: keyword.toUpperCase(), args: rest.join(' ') };
    });
}

export function parseDockerfile(text: string): Dockerfile {
  const args: Record<string, string> = {};
  const stages: Stage[] = [];
  for (const instruction of instructions(text)) {
    if (instruction.keyword === 'FROM') {
      const [base = '', as, name] = instruction.args.split(/\s+/);
      stages.push({ base, name: as?.toUpperCase() === 'AS' ? name : undefined, instructions: [] });
    } else if (stages.length === 0 && instruction.keyword === 'ARG') {
      const [key = '', value = ''] = instruction.args.split('=');
      args[key] = value;
    } else {
      stages.at(-1)?.instructions.push(instruction);
    }
  }
  return { args, stages };
}

export function copies(stage: Stage): Copy[] {
  return stage.instructions
    .filter((i) => i.keyword === 'COPY')
    .map((i) => {
      const words = i.args.split(/\s+/);
      const from = words.find((w) => w.startsWith('--from='))?.slice('--from='.length);
      const paths = words.filter((w) => !w.startsWith('--'));
      return { from, sources: paths.slice(0, -1), destination: paths.at(-1) ?? '' };
    });
}

/** The JSON-array form of ENTRYPOINT or CMD (the exec form, which receives signals directly). */
export function execForm(stage: Stage, keyword: 'ENTRYPOINT' | 'CMD'): string[] | undefined {
  const found = stage.instructions.filter((i) => i.keyword === keyword).at(-1);
  return found ? (JSON.parse(found.args) as string[]) : undefined;
}

export function lastValue(stage: Stage, keyword: string): string | undefined {
  return stage.instructions.filter((i) => i.keyword === keyword).at(-1)?.args;
}

/** Whether .dockerignore lets `path` into the build context (the "*" then "!path" style). */
export function inContext(dockerignore: string, path: string): boolean {
  let included = true;
  for (const raw of dockerignore.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const negated = line.startsWith('!');
    const pattern = (negated ? line.slice(1) : line).replace(/\/$/, '');
    const matches = pattern === '*' || path === pattern || path.startsWith(`${pattern}/`);
    if (matches) included = negated;
  }
  return included;
}
