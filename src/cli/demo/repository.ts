/**
 * The demo's Git repository: a local folder driven with the native `git`, as a person would —
 * seeded from examples/, then a second commit. Janus reads and writes it in place.
 */
import { execFile } from 'node:child_process';
import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Settings that make the demo independent of the user's Git configuration (identity, signing, hooks). */
const ISOLATED = [
  '-c',
  'user.name=Demo Developer',
  '-c',
  'user.email=developer@example.com',
  '-c',
  'commit.gpgsign=false',
  '-c',
  'core.hooksPath=/dev/null',
  '-c',
  'init.defaultBranch=main',
];

export class DemoRepository {
  readonly path: string;

  constructor(path: string) {
    this.path = path;
  }

  async git(...args: string[]): Promise<string> {
    const { stdout } = await run('git', [...ISOLATED, '-C', this.path, ...args], {
      maxBuffer: 16 * 1024 * 1024,
    });
    return stdout;
  }

  /** A new repository on branch main whose first commit holds examples/transactions. */
  static create(path: string, examples: string): Promise<DemoRepository> {
    return DemoRepository.seed(
      path,
      { from: join(examples, 'transactions'), into: 'transactions' },
      'Release 2 of the web front end, and expose the new checkout',
    );
  }

  /** A new repository on branch main whose first commit holds folder `from`, at `into` of it. */
  static async seed(
    path: string,
    files: { from: string; into: string },
    subject: string,
  ): Promise<DemoRepository> {
    await run('git', [...ISOLATED, 'init', '--quiet', '--initial-branch=main', path]);
    const repo = new DemoRepository(path);
    await cp(files.from, join(path, files.into), { recursive: true });
    await repo.git('add', '--all');
    await repo.git('commit', '--quiet', '-m', subject);
    return repo;
  }

  /** Copies examples/release-3 over the working tree and commits it; returns the commit subject. */
  async commitRelease3(examples: string): Promise<string> {
    return this.#commitFrom(join(examples, 'release-3'), 'Release 3 of the web front end');
  }

  /**
   * Copies examples/release-4 over the working tree with its smoke test's address replaced by
   * `smokeUrl` (the demo's stand-in), and commits it; returns the commit subject.
   */
  async commitRelease4(examples: string, exampleUrl: string, smokeUrl: string): Promise<string> {
    await cp(join(examples, 'release-4'), this.path, { recursive: true });
    const file = join(this.path, 'transactions/deploy-v4/transaction.yaml');
    const text = await readFile(file, 'utf8');
    if (!text.includes(exampleUrl)) throw new Error(`${file} no longer names ${exampleUrl}`);
    await writeFile(file, text.replaceAll(exampleUrl, smokeUrl));
    await this.git('add', '--all');
    const subject = 'Release 4 of the web front end: the new checkout';
    await this.git('commit', '--quiet', '-m', subject);
    return subject;
  }

  /** Copies examples/follow-up over the working tree and commits it; returns the commit subject. */
  async commitFollowUp(examples: string): Promise<string> {
    const followUp = join(examples, 'follow-up');
    const reason = (await readFile(join(followUp, 'transactions/deploy-v2/ROLLBACK'), 'utf8')).trim();
    return this.#commitFrom(followUp, `Roll back deploy-v2: ${reason.split('\n')[0]}`);
  }

  /** Copies `dir` over the working tree and commits it; returns the commit's hash. */
  async commitTree(dir: string, subject: string): Promise<string> {
    await this.#commitFrom(dir, subject);
    return (await this.git('rev-parse', 'HEAD')).trim();
  }

  /** The lines the last commit removed and added in `file`, comments left out ("-a", "+b"). */
  async lastChange(file: string): Promise<string[]> {
    const diff = await this.git('diff', '--unified=0', 'HEAD~1', 'HEAD', '--', file);
    return diff.split('\n').filter((line) => /^[-+](?![-+]{2} )/.test(line) && !/^[-+]\s*#/.test(line));
  }

  async #commitFrom(dir: string, subject: string): Promise<string> {
    await cp(dir, this.path, { recursive: true });
    await this.git('add', '--all');
    await this.git('commit', '--quiet', '-m', subject);
    return subject;
  }

  /** Subjects of the commits on `branch`, newest first; none while the branch does not exist. */
  async subjects(branch: string): Promise<string[]> {
    try {
      return (await this.git('log', '--format=%s', branch, '--')).split('\n').filter(Boolean);
    } catch {
      return [];
    }
  }

  show(branch: string, file: string): Promise<string> {
    return this.git('show', `${branch}:${file}`);
  }
}
