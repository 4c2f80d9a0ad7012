import { describe, expect, it } from 'vitest';
import type { RunOut, StepOut } from '@/client';
import { emptyRun, fromHistory, reduceRunEvents } from '@/features/runs/run-reducer';
import { agreeing, cancelled, majority, oneFailed, repaired, RUN } from '@/test/attempts';
import { storedRun, streamedArtifact } from '@/test/runs';
import { hasAttempts } from './lanes';
import type { AttemptOut } from './types';

const reduce = (events: typeof agreeing) => reduceRunEvents(emptyRun(RUN), events);

describe('attempts: events into lanes', () => {
  it('routes each attempt’s steps into its own lane, by the attempt they carry', () => {
    const v = reduce(agreeing);
    expect(hasAttempts(v)).toBe(true);
    expect(v.steps).toEqual([]);
    expect(v.attempts.map((l) => [l.attempt, l.strategy, l.model, l.status])).toEqual([
      [1, 'pandas', 'openai/scripted', 'succeeded'],
      [2, 'SQL (DuckDB)', 'openai/scripted', 'succeeded'],
      [3, 'a second way, compared', 'openai/scripted', 'succeeded'],
    ]);
    // Each lane has its own step 1: same index, its own code and output.
    expect(v.attempts.map((l) => l.view.steps.map((s) => s.index))).toEqual([[1], [1], [1]]);
    expect(v.attempts[0].view.steps[0]).toMatchObject({ code: expect.stringContaining('pd.read_csv'), output: '4650.0\n', finished: true });
    expect(v.attempts[1].view.steps[0]).toMatchObject({ code: expect.stringContaining('duckdb.sql'), output: '4650\n' });
    expect(v.attempts[1].view.steps[0].thought).toBe('Thought: sum the March orders.');
    expect(v.attempts.map((l) => l.answer)).toEqual(['Revenue in March was 4,650.', 'March revenue: 4,650', 'It was 4,650 in March.']);
  });

  it('makes the chosen attempt’s answer the run’s, with the verdict', () => {
    const v = reduce(agreeing);
    expect(v.verdict).toEqual({
      agreement: '3/3',
      outcome: 'agree',
      chosen: 1,
      groups: [{ answer: '4650', attempts: [1, 2, 3] }],
      reason: 'All three computed 4,650.',
    });
    expect(v.answer).toBe('Revenue in March was 4,650.');
    expect(v.status).toBe('succeeded');
  });

  it('streams the lanes while they run: a finished attempt next to running ones', () => {
    // Up to attempt 1's attempt.finished: the interleaving has attempts 2 and 3 mid-step.
    const cut = agreeing.findIndex((e) => e.event === ('attempt.finished' as string)) + 1;
    const v = reduce(agreeing.slice(0, cut));
    expect(v.status).toBe('running');
    expect(v.attempts.map((l) => l.status)).toEqual(['succeeded', 'running', 'running']);
    expect(v.attempts[1].view.steps[0]).toMatchObject({ finished: true, output: '4650\n' });
    expect(v.answer).toBeNull();
    expect(v.verdict).toBeNull();
  });

  it('applies a stream delivered out of order (a resume) exactly as in order', () => {
    const shuffled = [...agreeing.slice(0, 3), ...agreeing.slice(6, 12), ...agreeing.slice(3, 6), ...agreeing.slice(12), agreeing[8]];
    expect(reduce(shuffled)).toEqual(reduce(agreeing));
  });

  it('keeps the majority’s answer and the verdict that names the dissent', () => {
    const v = reduce(majority);
    expect(v.verdict).toMatchObject({ outcome: 'majority', agreement: '2/3', chosen: 1, reason: 'attempt 3 found 4,812 because it kept refunded orders' });
    expect(v.verdict?.groups).toEqual([
      { answer: '4650', attempts: [1, 2] },
      { answer: '4812', attempts: [3] },
    ]);
    expect(v.answer).toBe('Revenue in March was 4,650.');
    expect(v.attempts[2].answer).toBe('It was 4,812 in March.');
  });

  it('shows a failed attempt with its errors and its repair, the others unharmed', () => {
    const v = reduce(oneFailed);
    const [one, two, three] = v.attempts;
    expect(two.status).toBe('failed');
    expect(two.answer).toBeNull();
    expect(two.view.steps.map((s) => s.error)).toEqual(['CatalogException: Table orders.csv does not exist', 'CatalogException: Table orders.csv does not exist']);
    expect(two.view.repairs).toEqual([{ step: 2, strategies: ['re-read the real columns', 'a simpler method', 'pandas instead'], chosen: null, reasons: [] }]);
    expect(v.repairs).toEqual([]);
    expect([one.status, three.status]).toEqual(['succeeded', 'succeeded']);
    expect(one.view.steps[0].error).toBeNull();
    expect(v.answer).toBe('Revenue in March was 4,650.');
  });

  it('ends a cancelled run’s running attempts as cancelled; the one that had answered keeps its answer', () => {
    const v = reduce(cancelled);
    expect(v.status).toBe('cancelled');
    expect(v.attempts.map((l) => l.status)).toEqual(['succeeded', 'cancelled', 'cancelled']);
    expect(v.attempts[1].view.steps[0]).toMatchObject({ code: expect.stringContaining('duckdb'), finished: true });
    expect(v.verdict).toBeNull();
    expect(v.answer).toBeNull();
  });

  it('keeps a single attempt’s repair in the run’s own step list', () => {
    const v = reduce(repaired);
    expect(hasAttempts(v)).toBe(false);
    expect(v.repairs).toEqual([{ step: 2, strategies: ['re-read the real columns and types', 'a simpler method', 'a different library'], chosen: 2, reasons: [] }]);
    expect(v.steps.map((s) => s.index)).toEqual([1, 2, 3]);
    expect(v.answer).toBe('Revenue in March was 4,650.');
  });
});

describe('attempts: a stored run', () => {
  const attempts: AttemptOut[] = [
    { attempt: 1, strategy: 'pandas', model: 'm', status: 'succeeded', answer: 'Revenue in March was 4,650.', tokens_in: 300, tokens_out: 60, cost_usd: 0.0004 },
    { attempt: 2, strategy: 'SQL (DuckDB)', model: 'm', status: 'succeeded', answer: 'March revenue: 4,650', tokens_in: 310, tokens_out: 61, cost_usd: 0.0004 },
    { attempt: 3, strategy: 'a second way, compared', model: 'm', status: 'succeeded', answer: 'It was 4,812 in March.', tokens_in: 290, tokens_out: 59, cost_usd: 0.0004 },
  ];
  const verdict = {
    agreement: '2/3',
    outcome: 'majority' as const,
    chosen: 1,
    groups: [
      { answer: '4650', attempts: [1, 2] },
      { answer: '4812', attempts: [3] },
    ],
    reason: 'attempt 3 found 4,812 because it kept refunded orders',
  };
  const step = (index: number, attempt: number, code: string) =>
    ({ index, attempt, thought: null, code, output: null, error: null, duration_ms: 5, tokens_in: 1, tokens_out: 1, queries: [] }) as StepOut;
  const stored = (over: Partial<RunOut>) =>
    storedRun({ final_answer: 'Revenue in March was 4,650.', ...over } as Partial<RunOut>);

  it('shows the verdict and the attempts from GET run’s attempts and verdict', () => {
    const v = fromHistory(stored({ attempts, verdict }));
    expect(v.verdict).toEqual(verdict);
    expect(v.answer).toBe('Revenue in March was 4,650.');
    expect(v.attempts.map((l) => [l.attempt, l.strategy, l.status, l.answer, l.tokensIn])).toEqual([
      [1, 'pandas', 'succeeded', 'Revenue in March was 4,650.', 300],
      [2, 'SQL (DuckDB)', 'succeeded', 'March revenue: 4,650', 310],
      [3, 'a second way, compared', 'succeeded', 'It was 4,812 in March.', 290],
    ]);
    expect(v.attempts.every((l) => l.view.steps.length === 0)).toBe(true);
  });

  it('puts steps and artifacts that name their attempt into its lane; the run’s results are the chosen attempt’s', () => {
    const art = (id: string, attempt: number) => ({ ...streamedArtifact({ id, step: 1 }), attempt });
    const v = fromHistory(
      stored({
        attempts,
        verdict,
        steps: [step(1, 1, 'a = 1'), step(1, 2, 'b = 2'), step(2, 2, 'b = 3'), step(1, 3, 'c = 4')],
        artifacts: [art('x1', 1), art('x2', 2), art('x3', 3)],
      }),
    );
    expect(v.steps).toEqual([]);
    expect(v.attempts.map((l) => l.view.steps.map((s) => s.code))).toEqual([['a = 1'], ['b = 2', 'b = 3'], ['c = 4']]);
    expect(v.attempts.map((l) => l.view.artifacts.map((a) => a.id))).toEqual([['x1'], ['x2'], ['x3']]);
    expect(v.artifacts.map((a) => a.id)).toEqual(['x1']);
  });

  it('shows a run’s repairs after a reload as the stream showed them', () => {
    const live = reduce(repaired).repairs;
    const reloaded = fromHistory(storedRun({ final_answer: '42', repairs: live.map((r) => ({ ...r, attempt: null })) }));
    expect(reloaded.repairs).toEqual(live);
    expect(reloaded.repairs[0]).toMatchObject({ step: 2, chosen: 2 });
  });

  it('puts an attempt’s stored repair into its lane after a reload', () => {
    const repair = { step: 2, attempt: 2, strategies: ['re-read the real columns', 'a simpler method'], chosen: null, reasons: ['no luck', 'no luck'] };
    const v = fromHistory(stored({ attempts, verdict, repairs: [repair] }));
    expect(v.repairs).toEqual([]);
    expect(v.attempts.map((l) => l.view.repairs.map((r) => [r.step, r.chosen, r.reasons]))).toEqual([[], [[2, null, ['no luck', 'no luck']]], []]);
  });

  it('builds a single-attempt run as before', () => {
    const own = { index: 1, thought: null, code: 'x = 42', output: null, error: null, duration_ms: 5, tokens_in: 1, tokens_out: 1, queries: [] } as StepOut;
    const v = fromHistory(storedRun({ final_answer: '42', steps: [own] }));
    expect(hasAttempts(v)).toBe(false);
    expect(v.attempts).toEqual([]);
    expect(v.steps.map((s) => s.code)).toEqual(['x = 42']);
    expect(v.answer).toBe('42');
  });
});
