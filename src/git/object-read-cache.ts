/**
 * What reading object headers (object-size.ts) keeps for one ObjectStore operation: the names of
 * the pack indexes, the parsed indexes, and an open handle per pack file. Before, every object
 * read listed `objects/pack` again and opened and closed its pack: a 400-directory poll reads
 * thousands of objects, each paying those thread-pool round trips.
 *
 * A fetch inside the operation may add a pack: the listing is taken again (once per lookup) when
 * an object is found neither in the listed packs nor loose. Packs are never removed during an
 * operation (compaction runs between operations, repository.ts). `close()` closes the handles;
 * the store's owner calls it when the operation ends.
 */
import type { FileHandle } from 'node:fs/promises';
import { open, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PackIndex } from './pack-index.ts';

export class ObjectReadCache {
  readonly #packDir: string;
  #listing: Promise<string[]> | undefined;
  readonly #indexes = new Map<string, Promise<PackIndex | undefined>>();
  readonly #handles = new Map<string, Promise<FileHandle>>();
  #closed = false;

  constructor(gitdir: string) {
    this.#packDir = join(gitdir, 'objects', 'pack');
  }

  /** The object's pack file and offset, among the packs listed so far (`fresh`: list again). */
  async findPacked(oid: string, fresh = false): Promise<{ path: string; offset: number } | undefined> {
    if (fresh || !this.#listing)
      this.#listing = readdir(this.#packDir).then(
        (names) => names.filter((f) => f.endsWith('.idx')),
        () => [],
      );
    for (const name of await this.#listing) {
      const offset = (await this.#index(join(this.#packDir, name)))?.offset(oid);
      if (offset !== undefined) return { path: join(this.#packDir, name.replace(/\.idx$/, '.pack')), offset };
    }
    return undefined;
  }

  /** A pack was added (a fetch): the next lookup lists the packs again. */
  relist(): void {
    this.#listing = undefined;
  }

  /** Up to `length` bytes of pack `path` from `position`, through the pack's kept handle. */
  async readPack(path: string, position: number, length: number): Promise<Buffer> {
    if (this.#closed) return readOnce(path, position, length); // a store kept past its operation
    let handle = this.#handles.get(path);
    if (!handle) {
      handle = open(path, 'r');
      this.#handles.set(path, handle);
      handle.catch(() => this.#handles.delete(path));
    }
    return readFrom(await handle, position, length);
  }

  /** Packs with an open handle (for tests: handles are kept, and all closed at the end). */
  get openPacks(): number {
    return this.#handles.size;
  }

  /** Closes every pack handle; the cache is not used afterwards. */
  async close(): Promise<void> {
    this.#closed = true;
    const handles = [...this.#handles.values()];
    this.#handles.clear();
    await Promise.all(handles.map((h) => h.then((fh) => fh.close()).catch(() => undefined)));
  }

  #index(path: string): Promise<PackIndex | undefined> {
    let index = this.#indexes.get(path);
    if (!index) {
      index = readFile(path).then(
        (bytes) => PackIndex.parse(bytes),
        () => undefined,
      );
      this.#indexes.set(path, index);
    }
    return index;
  }
}

/**
 * Up to `length` bytes of loose object file `path` from its start; undefined when it is absent.
 * Opening it answers whether it exists: no separate `access()`.
 */
export function readLoose(path: string, length: number): Promise<Buffer | undefined> {
  return readOnce(path, 0, length).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
}

async function readOnce(path: string, position: number, length: number): Promise<Buffer> {
  const handle = await open(path, 'r');
  try {
    return await readFrom(handle, position, length);
  } finally {
    await handle.close();
  }
}

async function readFrom(handle: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  const { bytesRead } = await handle.read(buffer, 0, length, position);
  return buffer.subarray(0, bytesRead);
}
