import { describe, expect, it } from 'vitest';
import { guardHooks } from '../../../src/runtime/guard-hooks.ts';

interface Hooks {
  count?(n: number): void;
  fail?(): void;
}

describe('guardHooks', () => {
  it('calls hooks with their arguments and `this`, including methods of a class instance', () => {
    class Counter implements Hooks {
      total = 0;
      count(n: number) {
        this.total += n;
      }
    }
    const counter = new Counter();
    const hooks = guardHooks<Hooks>(counter, ['count', 'fail'], () => {});

    hooks.count?.(2);
    hooks.count?.(3);

    expect(counter.total).toBe(5);
    expect(hooks.fail).toBeUndefined();
  });

  it('reports a throwing hook instead of throwing', () => {
    const reported: string[] = [];
    const hooks = guardHooks<Hooks>(
      {
        fail: () => {
          throw new Error('bug');
        },
      },
      ['fail'],
      (e, hook) => reported.push(`${hook}: ${(e as Error).message}`),
    );

    expect(() => hooks.fail?.()).not.toThrow();
    expect(reported).toEqual(['fail: bug']);
  });

  it('returns no hooks for none', () => {
    expect(guardHooks<Hooks>(undefined, ['count'], () => {})).toEqual({});
  });
});
