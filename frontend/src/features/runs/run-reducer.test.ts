import { describe, expect, it } from 'vitest';
import type { RunOut } from '@/client';
import type { RunEvent } from './events';
import { toRunEvent } from './events';
import { emptyRun, fromHistory, reduceRun, reduceRunEvents } from './run-reducer';

const R = 'run-1';
const events: RunEvent[] = [
  { event: 'run.started', run_id: R, seq: 1, query: 'Top region?', model: 'm' },
  { event: 'step.started', run_id: R, seq: 2, step: 1 },
  { event: 'model.delta', run_id: R, seq: 3, step: 1, text: 'Thought: look' },
  { event: 'model.delta', run_id: R, seq: 4, step: 1, text: ' at it.' },
  { event: 'step.code', run_id: R, seq: 5, step: 1, code: 'print(1)' },
  { event: 'step.output', run_id: R, seq: 6, step: 1, output: '1\n' },
  { event: 'step.error', run_id: R, seq: 7, step: 1, error: 'NameError: x' },
  {
    event: 'artifact',
    run_id: R,
    seq: 8,
    step: 1,
    artifact: { id: 'a1', kind: 'table', name: 't.json', mime: 'application/json', size: 10, url: '/x' },
  },
  { event: 'step.finished', run_id: R, seq: 9, step: 1, duration_ms: 12, tokens_in: 5, tokens_out: 6 },
  { event: 'final', run_id: R, seq: 10, answer: 'r0' },
  { event: 'run.finished', run_id: R, seq: 11, status: 'succeeded', error: null, tokens_in: 50, tokens_out: 60, cost_usd: 0.002, duration_ms: 900 },
];

const inOrder = reduceRunEvents(emptyRun(R), events);

describe('reduceRun', () => {
  it('shows a queued run and its place in line until it starts', () => {
    const queued = reduceRunEvents(emptyRun(R, 'Top region?'), [
      { event: 'run.queued', run_id: R, seq: 1, position: 3 },
      { event: 'run.queued', run_id: R, seq: 2, position: 1 },
    ]);
    expect(queued).toMatchObject({ status: 'queued', queuePosition: 1, query: 'Top region?' });
    const started = reduceRun(queued, { event: 'run.started', run_id: R, seq: 3, query: 'Top region?', model: 'm' });
    expect(started).toMatchObject({ status: 'running', queuePosition: null });
  });

  it('builds the run from events in order', () => {
    expect(inOrder.status).toBe('succeeded');
    expect(inOrder.lastSeq).toBe(11);
    expect(inOrder.query).toBe('Top region?');
    expect(inOrder.steps).toHaveLength(1);
    expect(inOrder.steps[0]).toMatchObject({
      index: 1,
      thought: 'Thought: look at it.',
      code: 'print(1)',
      output: '1\n',
      error: 'NameError: x',
      durationMs: 12,
      finished: true,
    });
    expect(inOrder.artifacts.map((a) => a.id)).toEqual(['a1']);
    expect(inOrder.answer).toBe('r0');
    expect(inOrder).toMatchObject({ tokensIn: 50, tokensOut: 60, costUsd: 0.002, durationMs: 900 });
  });

  it('orders by seq whatever the arrival order', () => {
    const shuffled = [events[3], events[0], events[10], events[2], events[1], ...events.slice(4, 10).reverse()];
    expect(reduceRunEvents(emptyRun(R), shuffled)).toEqual(inOrder);
  });

  it('ignores duplicates, before and after they are applied', () => {
    const doubled = events.flatMap((e) => [e, e]);
    expect(reduceRunEvents(emptyRun(R), doubled)).toEqual(inOrder);
    const withEarlyDup = [events[0], events[3], events[3], ...events.slice(1)];
    expect(reduceRunEvents(emptyRun(R), withEarlyDup)).toEqual(inOrder);
    expect(reduceRun(inOrder, events[4])).toBe(inOrder);
  });

  it('resumes after a gap: events past the gap wait until a replay fills it', () => {
    let v = reduceRunEvents(emptyRun(R), events.slice(0, 3));
    v = reduceRunEvents(v, events.slice(6, 8)); // 7 and 8 arrive, 4..6 were lost
    expect(v.lastSeq).toBe(3);
    expect(v.pending.map((e) => e.seq)).toEqual([7, 8]);
    expect(v.steps[0].code).toBeNull();
    // The resume (Last-Event-ID: 3) replays 4.. including what is already pending.
    v = reduceRunEvents(v, events.slice(3));
    expect(v).toEqual(inOrder);
    expect(v.pending).toEqual([]);
  });

  it('marks every step finished on run.finished, with the error of a failed run', () => {
    const failed = reduceRunEvents(emptyRun(R), [
      events[0],
      events[1],
      { event: 'run.finished', run_id: R, seq: 3, status: 'failed', error: 'model down', tokens_in: 1, tokens_out: 0, cost_usd: null, duration_ms: 5 },
    ]);
    expect(failed.status).toBe('failed');
    expect(failed.error).toBe('model down');
    expect(failed.steps.every((s) => s.finished)).toBe(true);
  });

  it("ignores another run's events", () => {
    const other = { ...events[0], run_id: 'run-2' };
    expect(reduceRun(emptyRun(R), other)).toEqual(emptyRun(R));
  });
});

describe('input.requested', () => {
  it('waits for input, then runs again on the next event', () => {
    let v = reduceRunEvents(emptyRun(R), events.slice(0, 2));
    v = reduceRun(v, { event: 'input.requested', run_id: R, seq: 3, question: 'Which year?' });
    expect(v.status).toBe('waiting_input');
    expect(v.question).toBe('Which year?');
    v = reduceRun(v, { event: 'model.delta', run_id: R, seq: 4, step: 1, text: 'ok' });
    expect(v.status).toBe('running');
  });
});

describe('toRunEvent', () => {
  it('types a message and rejects malformed data', () => {
    expect(toRunEvent('final', '{"run_id":"r","seq":4,"answer":"x"}')).toEqual({ event: 'final', run_id: 'r', seq: 4, answer: 'x' });
    expect(toRunEvent('final', 'not json')).toBeNull();
    expect(toRunEvent('final', '{"answer":"x"}')).toBeNull();
  });
});

describe('fromHistory', () => {
  it('renders a stored run like a streamed one', () => {
    const run: RunOut = {
      id: R,
      session_id: 's',
      status: 'succeeded',
      query: 'Top region?',
      model: 'm',
      final_answer: 'r0',
      error: null,
      steps: [{ index: 1, thought: 'look', code: 'print(1)', output: '1\n', error: null, duration_ms: 12, tokens_in: 5, tokens_out: 6 }],
      plans: [],
      verifications: [],
      artifacts: [
        { id: 'a1', run_id: R, session_id: 's', step: 1, kind: 'plotly', name: 'f.json', mime: 'application/json', size: 3, url: '/u', created_at: '' },
      ],
      tokens_in: 5,
      tokens_out: 6,
      cost_usd: null,
      created_at: '2026-01-01T00:00:00Z',
      started_at: '2026-01-01T00:00:00Z',
      finished_at: '2026-01-01T00:00:02Z',
    };
    const v = fromHistory(run);
    expect(v.steps[0]).toMatchObject({ thought: 'look', code: 'print(1)', finished: true });
    expect(v.artifacts[0]).toMatchObject({ id: 'a1', kind: 'plotly', step: 1 });
    expect(v.durationMs).toBe(2000);
    expect(v.answer).toBe('r0');
  });
});
