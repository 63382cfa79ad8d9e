// The request allowance of a history walk or a reconciliation: every request counts, and requests
// paid for together (a resumed window's check and the page after it) are all taken at once or none.
import { describe, expect, it } from 'vitest';
import { RequestBudgets } from '../../src/api/request-budget.js';
import { RequestAllowance, RequestAllowanceSpent } from '../../src/sync/request-allowance.js';

const KEY = 'key-allowance';
const shared = (): RequestBudgets => new RequestBudgets({ concurrency: 4, maxRequestsPerSecond: undefined });
/** Sends one request through `budgets`: acquires the key and releases it. */
async function send(budgets: { forKey(apiKey: string): { acquire(): Promise<() => void> } }): Promise<void> {
  const release = await budgets.forKey(KEY).acquire();
  release();
}

describe('RequestAllowance', () => {
  it('counts each request and refuses the one after the last', async () => {
    const allowance = new RequestAllowance(2);
    const budgets = allowance.budgets(shared());
    await send(budgets);
    await send(budgets);
    await expect(send(budgets)).rejects.toBeInstanceOf(RequestAllowanceSpent);
    expect(allowance.used).toBe(2);
  });

  it('takes prepaid requests at once: they go out after the allowance is spent by others, and any after them count', async () => {
    const allowance = new RequestAllowance(4);
    const keys = shared();
    const others = allowance.budgets(keys);
    await send(others);
    const paid = allowance.prepaid(keys, 2);
    expect(allowance.used).toBe(3);
    // Another window takes the last unit before the paid requests go out.
    await send(others);
    await expect(send(others)).rejects.toBeInstanceOf(RequestAllowanceSpent);
    await send(paid);
    await send(paid);
    expect(allowance.used).toBe(4);
    await expect(send(paid)).rejects.toBeInstanceOf(RequestAllowanceSpent);
  });

  it('refuses to prepay more than is left, and takes nothing then', () => {
    const allowance = new RequestAllowance(3);
    allowance.take();
    allowance.take();
    expect(() => allowance.prepaid(shared(), 2)).toThrow(RequestAllowanceSpent);
    expect(allowance.used).toBe(2);
    allowance.prepaid(shared(), 1);
    expect(allowance.used).toBe(3);
  });
});
