import { QueryClient } from '@tanstack/react-query';
import { describe, expect, it, vi } from 'vitest';
import { projectKeys } from '@/features/projects/queries';
import { systemKeys } from '@/features/system/queries';
import { ApiError } from '@/lib/api';
import { runKeys } from './queries';
import { isFollowedError, refetchStale, runErrorOf } from './run-errors';

const scope = { projectId: 'p1', sessionId: 's1' };

function staleAfter(e: unknown) {
  const qc = new QueryClient();
  const invalidate = vi.spyOn(qc, 'invalidateQueries').mockResolvedValue();
  refetchStale(qc, runErrorOf(e), scope);
  return invalidate.mock.calls.map(([filters]) => filters?.queryKey);
}

describe('a refused question', () => {
  it('stands above the composer with what it makes stale', () => {
    const sandbox = runErrorOf(new ApiError(503, 'No sandbox.', 'sandbox_unavailable'));
    expect([sandbox.show, sandbox.message('')]).toEqual(['refusal', 'No sandbox.']);
    expect(staleAfter(new ApiError(503, 'No sandbox.', 'sandbox_unavailable'))).toEqual([systemKeys.sandbox]);

    const budget = runErrorOf(new ApiError(403, 'Budget spent.', 'budget_exceeded'));
    expect([budget.show, budget.fix]).toEqual(['refusal', 'budget']);
    expect(staleAfter(new ApiError(403, 'Budget spent.', 'budget_exceeded'))).toEqual([projectKeys.detail('p1')]);

    const busy = runErrorOf(new ApiError(409, 'Still answering.', 'session_busy'));
    expect([busy.show, busy.untilIdle]).toEqual(['refusal', true]);
    expect(staleAfter(new ApiError(409, 'Still answering.', 'session_busy'))).toEqual([runKeys.session('s1')]);
  });

  it('is otherwise told by the control that asked, or not at all after a 401', () => {
    const other = runErrorOf(new ApiError(422, 'Too long.'));
    expect([other.show, other.message('Could not send.')]).toEqual(['default', 'Too long.']);
    expect(runErrorOf('network').message('Could not send.')).toBe('Could not send.');
    expect(runErrorOf(new ApiError(401, 'Expired.', 'token_expired')).show).toBe('none');
    expect(runErrorOf(new ApiError(503, 'Busy.', 'server_busy', 1)).retry).toBe(true);
    expect(staleAfter(new ApiError(422, 'Too long.'))).toEqual([]);
  });
});

describe('a reply the run no longer waits for', () => {
  it('is followed on the stream, not shown', () => {
    expect(isFollowedError(new ApiError(409, 'Not waiting.', 'not_waiting_input'))).toBe(true);
    expect(isFollowedError(new ApiError(409, 'Not waiting.', 'not_waiting_approval'))).toBe(true);
    expect(runErrorOf(new ApiError(409, 'Not waiting.', 'not_waiting_input')).show).toBe('none');
    expect(isFollowedError(new ApiError(409, 'Busy.', 'session_busy'))).toBe(false);
  });
});
