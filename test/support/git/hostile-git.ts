/**
 * What a hostile Git pusher crafts with native git and pushes over HTTP: trees of a million
 * entries, commits with messages of a hundred MiB, a thousand directories sharing one large file.
 * Each costs a few MiB (or KiB) on the wire, and what it would cost the poller to parse is what
 * the tests measure.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { git, ScratchWorkTree } from './git-server.ts';

/** Runs git with `input` on stdin; returns stdout, trimmed. */
export function gitWithInput(cwd: string, input: Buffer | string, ...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { cwd, env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null' } });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve(Buffer.concat(out).toString().trim())
        : reject(new Error(`git ${args.join(' ')}: ${Buffer.concat(err).toString()}`)),
    );
    child.stdin.end(input);
  });
}

/** Writes a tree of `entries` files (f0000000, f0000001, …, all one blob); returns its oid. */
export async function hugeTree(cwd: string, entries: number): Promise<string> {
  const blob = Buffer.from(await gitWithInput(cwd, 'x\n', 'hash-object', '-w', '--stdin'), 'hex');
  const parts: Buffer[] = [];
  for (let i = 0; i < entries; i++)
    parts.push(Buffer.from(`100644 f${String(i).padStart(7, '0')}\0`, 'latin1'), blob);
  const file = join(cwd, '.git', 'huge-tree');
  await writeFile(file, Buffer.concat(parts));
  const oid = await git(cwd, 'hash-object', '-t', 'tree', '-w', file);
  await rm(file);
  return oid;
}

/** `tree` with the tree `oid` placed at `path` ('/'-separated), written; returns the new root. */
async function graft(cwd: string, tree: string | undefined, path: string, oid: string): Promise<string> {
  const [name = '', ...rest] = path.split('/');
  const lines = tree === undefined ? [] : (await git(cwd, 'ls-tree', tree)).split('\n').filter(Boolean);
  const others = lines.filter((l) => l.split('\t')[1] !== name);
  const existing = lines.find((l) => l.split('\t')[1] === name)?.split(/\s/)[2];
  const placed = rest.length === 0 ? oid : await graft(cwd, existing, rest.join('/'), oid);
  return gitWithInput(cwd, [...others, `040000 tree ${placed}\t${name}`].join('\n'), 'mktree');
}

export interface CraftedCommit {
  /** Files written as usual (null deletes). */
  files?: Record<string, string | null>;
  /** Trees built by `build` (in the scratch clone) placed at these paths. */
  trees?: Record<string, (cwd: string) => Promise<string>>;
  /** The commit message; default "crafted". */
  message?: string | Buffer;
}

/** Commits `commit` on top of `branch` of `url` and pushes it over HTTP; returns its sha. */
export async function pushCrafted(url: string, commit: CraftedCommit, branch = 'main'): Promise<string> {
  const work = await ScratchWorkTree.clone(url);
  try {
    await work.checkout(`origin/${branch}`);
    await work.write(commit.files ?? {});
    await work.git('add', '--all');
    let root = await work.git('write-tree');
    for (const [path, build] of Object.entries(commit.trees ?? {}))
      root = await graft(work.dir, root, path, await build(work.dir));
    const messageFile = join(work.dir, '.git', 'crafted-message');
    await writeFile(messageFile, commit.message ?? 'crafted');
    const sha = await work.git('commit-tree', root, '-p', 'HEAD', '-F', messageFile);
    await work.git('push', '--quiet', 'origin', `${sha}:refs/heads/${branch}`);
    return sha;
  } finally {
    await work.dispose();
  }
}

/**
 * Pushes one commit adding `count` transaction directories that all hold the same `shared` change
 * file (one blob in Git) besides their own transaction.yaml, written with git fast-import.
 */
export async function pushSharedFile(
  url: string,
  count: number,
  transactionYaml: (name: string) => string,
  shared: { name: string; content: string },
  branch = 'main',
): Promise<string> {
  const work = await ScratchWorkTree.clone(url);
  try {
    const parent = await work.git('rev-parse', `origin/${branch}`);
    const data = (text: string) => `data ${Buffer.byteLength(text)}\n${text}\n`;
    const stream = [`blob\nmark :1\n${data(shared.content)}`];
    stream.push(`commit refs/heads/${branch}\ncommitter Pusher <p@example.invalid> 0 +0000\n`);
    stream.push(`${data(`${count} directories`)}from ${parent}\n`);
    for (let i = 0; i < count; i++) {
      const name = `shared-${String(i).padStart(4, '0')}`;
      stream.push(`M 100644 :1 transactions/${name}/${shared.name}\n`);
      stream.push(`M 100644 inline transactions/${name}/transaction.yaml\n${data(transactionYaml(name))}`);
    }
    await gitWithInput(work.dir, `${stream.join('')}done\n`, 'fast-import', '--quiet', '--done');
    await work.git('push', '--quiet', 'origin', `refs/heads/${branch}:refs/heads/${branch}`);
    return await work.git('rev-parse', `refs/heads/${branch}`);
  } finally {
    await work.dispose();
  }
}

/**
 * Pushes one commit holding `files` (text, written as usual) and, at `zerosPath`, a file of
 * `zerosBytes` zero bytes: about a thousandth of that in a pack (zlib's best ratio), so a pusher
 * sends 1 GiB of it as ~1 MB. Written with git fast-import, streamed: never on disk whole.
 */
export async function pushZeros(
  url: string,
  files: Record<string, string>,
  zerosPath: string,
  zerosBytes: number,
  branch = 'main',
): Promise<string> {
  const work = await ScratchWorkTree.clone(url);
  try {
    const parent = await work.git('rev-parse', `origin/${branch}`);
    const importer = spawn('git', ['fast-import', '--quiet', '--done'], {
      cwd: work.dir,
      env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null' },
      stdio: ['pipe', 'ignore', 'inherit'],
    });
    const closed = new Promise<number | null>((resolve) => importer.once('close', resolve));
    const write = async (chunk: Buffer | string) => {
      if (!importer.stdin.write(chunk)) await once(importer.stdin, 'drain');
    };
    await write(`blob\nmark :1\ndata ${zerosBytes}\n`);
    const block = Buffer.alloc(4 * 1024 * 1024);
    for (let left = zerosBytes; left > 0; left -= block.length)
      await write(left >= block.length ? block : block.subarray(0, left));
    const data = (text: string) => `data ${Buffer.byteLength(text)}\n${text}\n`;
    await write(`\ncommit refs/heads/${branch}\ncommitter Pusher <p@example.invalid> 0 +0000\n`);
    await write(`${data(`${zerosBytes} bytes of zeros`)}from ${parent}\nM 100644 :1 ${zerosPath}\n`);
    for (const [path, text] of Object.entries(files)) await write(`M 100644 inline ${path}\n${data(text)}`);
    importer.stdin.end('done\n');
    const code = await closed;
    if (code !== 0) throw new Error(`git fast-import exited with ${code}`);
    await work.git('push', '--quiet', 'origin', `refs/heads/${branch}:refs/heads/${branch}`);
    return await work.git('rev-parse', `refs/heads/${branch}`);
  } finally {
    await work.dispose();
  }
}
