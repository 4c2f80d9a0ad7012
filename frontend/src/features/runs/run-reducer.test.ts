import { describe, expect, it } from 'vitest';
import type { RunOut } from '@/client';
import { storedRun as aStoredRun, runStarted, streamedArtifact } from '@/test/runs';
import type { RunEvent } from './events';
import { toRunEvent } from './events';
import { answerCheck, emptyRun, fromHistory, isRevisionRequest, openApproval, openQuestion, reduceRun, reduceRunEvents } from './run-reducer';

const R = 'run-1';
const events: RunEvent[] = [
  runStarted(R, 1, { query: 'Top region?', model: 'm' }),
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
    artifact: streamedArtifact({ id: 'a1', run_id: R, name: 't.json', url: '/x' }),
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
    const started = reduceRun(queued, runStarted(R, 3, { query: 'Top region?', model: 'm' }));
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

/** A stored run, to build views from history with. */
const storedRun = (over: Partial<RunOut> = {}): RunOut => aStoredRun({ id: R, session_id: 's', ...over });

const storedStep = (index: number, code: string, over: Partial<RunOut['steps'][number]> = {}): RunOut['steps'][number] => ({
  index,
  thought: 'Go.',
  code,
  output: null,
  error: null,
  duration_ms: 5,
  tokens_in: 1,
  tokens_out: 1,
  ...over,
});

/** Events of one run, numbered on from `before`. */
function numbered(list: Record<string, unknown>[], before: RunEvent[] = []): RunEvent[] {
  return [...before, ...list.map((x, i) => ({ run_id: R, seq: before.length + i + 1, ...x }) as RunEvent)];
}

describe('asking the user (ask_user)', () => {
  const asked = numbered([
    { event: 'run.started', query: 'Revenue?', model: 'm' },
    { event: 'step.started', step: 1 },
    { event: 'step.code', step: 1, code: "kind = ask_user('Net or gross revenue?')" },
    { event: 'step.finished', step: 1, duration_ms: 5, tokens_in: 1, tokens_out: 1 },
    { event: 'input.requested', step: 1, question: 'Net or gross revenue?' },
  ]);
  const answered = numbered(
    [
      { event: 'input.received', step: 1, question: 'Net or gross revenue?', answer: 'gross' },
      { event: 'step.started', step: 2 },
      { event: 'step.code', step: 2, code: "final_answer(f'Total {kind} revenue')" },
      { event: 'step.finished', step: 2, duration_ms: 5, tokens_in: 1, tokens_out: 1 },
      { event: 'final', answer: 'Total gross revenue' },
      { event: 'run.finished', status: 'succeeded', error: null, tokens_in: 2, tokens_out: 2, cost_usd: null, duration_ms: 10 },
    ],
    asked,
  );

  it('waits for the answer to the question the step asked', () => {
    const v = reduceRunEvents(emptyRun(R), asked);
    expect(v.status).toBe('waiting_input');
    expect(v.inputs).toEqual([{ step: 1, question: 'Net or gross revenue?', answer: null }]);
    expect(openQuestion(v)).toEqual(v.inputs[0]);
    expect(openApproval(v)).toBeNull();
    expect(v.steps.map((s) => [s.index, s.finished])).toEqual([[1, true]]);
  });

  it('keeps each question of a step that asks again after an answer', () => {
    const twice = numbered(
      [
        { event: 'input.received', step: 1, question: 'Net or gross revenue?', answer: 'gross' },
        { event: 'step.output', step: 1, output: 'gross\n' },
        { event: 'input.requested', step: 1, question: 'Which year?' },
      ],
      asked,
    );
    const waiting = reduceRunEvents(emptyRun(R), twice);
    expect(waiting.inputs).toEqual([
      { step: 1, question: 'Net or gross revenue?', answer: 'gross' },
      { step: 1, question: 'Which year?', answer: null },
    ]);
    expect(openQuestion(waiting)?.question).toBe('Which year?');
    const both = reduceRunEvents(waiting, numbered([{ event: 'input.received', step: 1, question: 'Which year?', answer: '2025' }], twice));
    expect(both.inputs.map((i) => i.answer)).toEqual(['gross', '2025']);
  });

  it('goes on with the answer, under its question', () => {
    const received = reduceRunEvents(emptyRun(R), answered.slice(0, asked.length + 1));
    expect(received.status).toBe('running');
    expect(received.inputs).toEqual([{ step: 1, question: 'Net or gross revenue?', answer: 'gross' }]);
    expect(openQuestion(received)).toBeNull();
    const done = reduceRunEvents(emptyRun(R), answered);
    expect(done).toMatchObject({ status: 'succeeded', answer: 'Total gross revenue' });
    expect(done.inputs).toEqual(received.inputs);
  });

  it('queues again when the answer waits for a free sandbox', () => {
    const v = reduceRunEvents(emptyRun(R), [
      ...answered.slice(0, asked.length + 1),
      { event: 'run.queued', run_id: R, seq: asked.length + 2, position: 1 },
    ]);
    expect(v).toMatchObject({ status: 'queued', queuePosition: 1 });
  });

  it('keeps an unanswered question, no longer open, when the run is stopped', () => {
    const v = reduceRun(reduceRunEvents(emptyRun(R), asked), {
      event: 'run.finished',
      run_id: R,
      seq: asked.length + 1,
      status: 'cancelled',
      error: null,
      tokens_in: 1,
      tokens_out: 1,
      cost_usd: null,
      duration_ms: 3,
    });
    expect(v.status).toBe('cancelled');
    expect(v.inputs).toEqual([{ step: 1, question: 'Net or gross revenue?', answer: null }]);
    expect(openQuestion(v)).toBeNull();
  });

  it('builds the waiting question from a stored run (pending), and the answered ones (inputs)', () => {
    const waiting = fromHistory(
      storedRun({
        status: 'waiting_input',
        steps: [storedStep(1, "kind = ask_user('Net or gross revenue?')")],
        pending: { kind: 'input', step: 1, question: 'Net or gross revenue?', code: null },
      }),
    );
    const live = reduceRunEvents(emptyRun(R), asked);
    expect(waiting.status).toBe('waiting_input');
    expect(waiting.inputs).toEqual(live.inputs);
    expect(openQuestion(waiting)).toEqual({ step: 1, question: 'Net or gross revenue?', answer: null });

    const done = fromHistory(storedRun({ inputs: [{ step: 1, question: 'Net or gross revenue?', answer: 'gross' }] }));
    expect(done.inputs).toEqual([{ step: 1, question: 'Net or gross revenue?', answer: 'gross' }]);
    expect(openQuestion(done)).toBeNull();
  });
});

describe('review mode (approval)', () => {
  const wrong = "df = pd.read_csv('sales.csv')\nprint(df['revenue'].max())";
  const right = "df = pd.read_csv('sales.csv')\nprint(df['revenue'].sum())";
  const requested = numbered([
    { event: 'run.started', query: 'Total?', model: 'm' },
    { event: 'step.started', step: 1 },
    { event: 'model.delta', step: 1, text: 'Thought: Sum it.\n<code>\n' },
    { event: 'step.code', step: 1, code: wrong },
    { event: 'approval.requested', step: 1, code: wrong },
  ]);
  const after = (list: Record<string, unknown>[]) => numbered(list, requested);

  it('waits with the code, the step not run', () => {
    const v = reduceRunEvents(emptyRun(R), requested);
    expect(v.status).toBe('waiting_approval');
    expect(v.approvals).toEqual([{ step: 1, decision: null, code: null, feedback: null }]);
    expect(openApproval(v)).toEqual(v.approvals[0]);
    expect(v.steps[0]).toMatchObject({ index: 1, code: wrong, output: null, finished: false });
  });

  it('continues the same step with the edited code once approved', () => {
    const events = after([
      { event: 'approval.received', step: 1, decision: 'edit', code: right },
      { event: 'step.code', step: 1, code: right },
      { event: 'step.output', step: 1, output: '4490.75\n' },
      { event: 'step.finished', step: 1, duration_ms: 30, tokens_in: 9, tokens_out: 4 },
    ]);
    const decided = reduceRunEvents(emptyRun(R), events.slice(0, requested.length + 1));
    expect(decided.status).toBe('running');
    expect(decided.steps[0].code).toBe(right); // the edit shows at once, before step.code repeats it
    expect(openApproval(decided)).toBeNull();
    const v = reduceRunEvents(emptyRun(R), events);
    expect(v.steps).toHaveLength(1);
    expect(v.steps[0]).toMatchObject({ index: 1, thought: 'Thought: Sum it.\n<code>\n', code: right, output: '4490.75\n', finished: true, durationMs: 30 });
    expect(v.approvals).toEqual([{ step: 1, decision: 'edit', code: right, feedback: null }]);
  });

  it('approves as written', () => {
    const v = reduceRunEvents(
      emptyRun(R),
      after([
        { event: 'approval.received', step: 1, decision: 'approve' },
        { event: 'step.code', step: 1, code: wrong },
        { event: 'step.output', step: 1, output: '1310.25\n' },
        { event: 'step.finished', step: 1, duration_ms: 30, tokens_in: 9, tokens_out: 4 },
      ]),
    );
    expect(v.approvals).toEqual([{ step: 1, decision: 'approve', code: null, feedback: null }]);
    expect(v.steps[0]).toMatchObject({ code: wrong, output: '1310.25\n', finished: true });
  });

  it('after a reject, the step ends unrun and the next code waits again', () => {
    const v = reduceRunEvents(
      emptyRun(R),
      after([
        { event: 'approval.received', step: 1, decision: 'reject', feedback: 'Sum, not max.' },
        { event: 'step.finished', step: 1, duration_ms: 0, tokens_in: 9, tokens_out: 4 },
        { event: 'step.started', step: 2 },
        { event: 'step.code', step: 2, code: right },
        { event: 'approval.requested', step: 2, code: right },
      ]),
    );
    expect(v.status).toBe('waiting_approval');
    expect(v.steps.map((s) => [s.index, s.code, s.output, s.error, s.finished])).toEqual([
      [1, wrong, null, null, true],
      [2, right, null, null, false],
    ]);
    expect(v.approvals).toEqual([
      { step: 1, decision: 'reject', code: null, feedback: 'Sum, not max.' },
      { step: 2, decision: null, code: null, feedback: null },
    ]);
    expect(openApproval(v)?.step).toBe(2);
  });

  it('builds the waiting code and the decisions from a stored run', () => {
    const waiting = fromHistory(
      storedRun({
        status: 'waiting_approval',
        steps: [storedStep(1, wrong, { error: 'Rejected by the user: Sum, not max.', duration_ms: 0 })],
        approvals: [{ step: 1, decision: 'reject', code: null, feedback: 'Sum, not max.' }],
        pending: { kind: 'approval', step: 2, question: null, code: right },
      }),
    );
    expect(waiting.status).toBe('waiting_approval');
    // The rejection is the decision, not an error of the code.
    expect(waiting.steps.map((s) => [s.index, s.code, s.error, s.finished])).toEqual([
      [1, wrong, null, true],
      [2, right, null, false],
    ]);
    expect(waiting.approvals.map((a) => a.decision)).toEqual(['reject', null]);
    expect(openApproval(waiting)?.step).toBe(2);

    const done = fromHistory(
      storedRun({
        steps: [storedStep(1, right, { output: '4490.75\n' })],
        approvals: [{ step: 1, decision: 'edit', code: right, feedback: null }],
      }),
    );
    expect(done.approvals).toEqual([{ step: 1, decision: 'edit', code: right, feedback: null }]);
    expect(done.steps[0]).toMatchObject({ code: right, output: '4490.75\n', error: null });
    expect(openApproval(done)).toBeNull();
  });
});

describe('plans and answer checks', () => {
  let seq = 0;
  const e = (event: Record<string, unknown>) => ({ run_id: R, seq: ++seq, ...event }) as RunEvent;
  const step = (n: number, extra: RunEvent[] = []) => [
    e({ event: 'step.started', step: n }),
    e({ event: 'step.code', step: n, code: `x = ${n}` }),
    ...extra,
    e({ event: 'step.finished', step: n, duration_ms: 5, tokens_in: 1, tokens_out: 1 }),
  ];
  const planned: RunEvent[] = [
    e({ event: 'run.started', query: 'Total?', model: 'm' }),
    e({ event: 'plan.delta', step: 1, text: '1. Read the' }),
    e({ event: 'plan.delta', step: 1, text: ' file.\n2. Sum' }),
    e({ event: 'plan', step: 1, text: '1. Read the file.\n2. Sum it.', tokens_in: 30, tokens_out: 8 }),
    ...step(1),
    ...step(2),
    e({ event: 'plan.delta', step: 3, text: 'Established: 4490.75.' }),
    e({ event: 'plan', step: 3, text: 'Established: 4490.75.\n1. Answer.', tokens_in: 40, tokens_out: 9 }),
    ...step(3, [
      e({ event: 'verification', step: 3, verdict: 'revise', reason: 'The output shows 4490.75, not 5000.', tokens_in: 20, tokens_out: 5, final: false }),
      e({ event: 'step.error', step: 3, error: 'Your final answer was checked before the user saw it, and the check asks for a revision: …' }),
    ]),
    ...step(4, [e({ event: 'verification', step: 4, verdict: 'approve', reason: 'It matches the output.', tokens_in: 20, tokens_out: 5, final: false })]),
    e({ event: 'final', answer: 'Total is 4490.75.' }),
    e({ event: 'run.finished', status: 'succeeded', error: null, tokens_in: 200, tokens_out: 60, cost_usd: null, duration_ms: 50 }),
  ];
  const upTo = (n: number) => reduceRunEvents(emptyRun(R), planned.slice(0, n));
  const indexOf = (f: (x: RunEvent) => boolean) => planned.findIndex(f);

  it('streams a plan from its deltas, then replaces it with the finished text', () => {
    expect(upTo(2).plans).toEqual([{ step: 1, text: '1. Read the', streaming: true, tokensIn: 0, tokensOut: 0 }]);
    expect(upTo(3).plans[0]).toMatchObject({ text: '1. Read the file.\n2. Sum', streaming: true });
    expect(upTo(4).plans).toEqual([{ step: 1, text: '1. Read the file.\n2. Sum it.', streaming: false, tokensIn: 30, tokensOut: 8 }]);
    expect(upTo(4).status).toBe('running');
  });

  it('keeps a revision apart, by the step it was written before', () => {
    const v = reduceRunEvents(emptyRun(R), planned);
    expect(v.plans.map((p) => [p.step, p.text, p.streaming])).toEqual([
      [1, '1. Read the file.\n2. Sum it.', false],
      [3, 'Established: 4490.75.\n1. Answer.', false],
    ]);
    const streaming = upTo(indexOf((x) => x.event === 'plan.delta' && x.step === 3) + 1);
    expect(streaming.plans.map((p) => [p.step, p.streaming])).toEqual([
      [1, false],
      [3, true],
    ]);
  });

  it('starts a plan over when a delta follows its finished text', () => {
    const v = reduceRun(upTo(4), { event: 'plan.delta', run_id: R, seq: 5, step: 1, text: 'Again' });
    expect(v.plans[0]).toMatchObject({ text: 'Again', streaming: true });
  });

  it('stops a plan streaming when the run ends before the plan does', () => {
    const v = reduceRunEvents(upTo(3), [
      { event: 'run.finished', run_id: R, seq: 4, status: 'cancelled', error: null, tokens_in: 1, tokens_out: 1, cost_usd: null, duration_ms: 1 },
    ]);
    expect(v.plans[0]).toMatchObject({ text: '1. Read the file.\n2. Sum', streaming: false });
  });

  it('keeps the checks in order: a revision request in the flow, the approval with the answer', () => {
    const beforeFinal = upTo(indexOf((x) => x.event === 'final'));
    expect(beforeFinal.verifications.map((c) => [c.step, c.verdict, isRevisionRequest(c)])).toEqual([
      [3, 'revise', true],
      [4, 'approve', false],
    ]);
    expect(answerCheck(beforeFinal)).toBeNull(); // no answer yet to go with
    const done = reduceRunEvents(emptyRun(R), planned);
    expect(answerCheck(done)).toMatchObject({ step: 4, verdict: 'approve', reason: 'It matches the output.' });
    expect(done.steps.find((s) => s.index === 3)?.error).toMatch(/^Your final answer was checked/);
  });

  it('shows a last revise (no rounds left) with the answer, not in the flow', () => {
    const v = reduceRunEvents(emptyRun(R), [
      runStarted(R, 1),
      { event: 'verification', run_id: R, seq: 2, step: 1, verdict: 'revise', reason: 'Still no code ran.', tokens_in: 1, tokens_out: 1, final: true },
      { event: 'final', run_id: R, seq: 3, answer: 'About 4,500.' },
    ]);
    expect(v.verifications.filter(isRevisionRequest)).toEqual([]);
    expect(answerCheck(v)).toMatchObject({ verdict: 'revise', reason: 'Still no code ran.', final: true });
  });

  it('applies plans and checks by seq, whatever the arrival order, once', () => {
    const inOrder = reduceRunEvents(emptyRun(R), planned);
    const scrambled = [...planned].reverse().flatMap((x, i) => (i % 3 ? [x] : [x, x]));
    expect(reduceRunEvents(emptyRun(R), scrambled)).toEqual(inOrder);
  });

  it('builds the same plans and checks from a stored run', () => {
    const live = reduceRunEvents(emptyRun(R), planned);
    const stored: RunOut = {
      id: R,
      session_id: 's',
      status: 'succeeded',
      query: 'Total?',
      model: 'm',
      final_answer: 'Total is 4490.75.',
      error: null,
      steps: [],
      plans: live.plans.map((p) => ({ step: p.step, text: p.text, tokens_in: p.tokensIn, tokens_out: p.tokensOut })),
      verifications: live.verifications.map((c) => ({ step: c.step, verdict: c.verdict, reason: c.reason, tokens_in: c.tokensIn, tokens_out: c.tokensOut })),
      inputs: [],
      approvals: [],
      pending: null,
      artifacts: [],
      tokens_in: 200,
      tokens_out: 60,
      cost_usd: null,
      created_at: '2026-01-01T00:00:00Z',
      started_at: null,
      finished_at: null,
    };
    const v = fromHistory(stored);
    expect(v.plans).toEqual(live.plans);
    expect(v.verifications.filter(isRevisionRequest).map((c) => c.step)).toEqual([3]);
    expect(answerCheck(v)).toMatchObject({ step: 4, verdict: 'approve', reason: 'It matches the output.' });

    // The last check of a succeeded run is about its answer, even a revise; a failed run has none.
    const revises: RunOut['verifications'] = [
      { step: 1, verdict: 'revise', reason: 'No code ran.', tokens_in: 1, tokens_out: 1 },
      { step: 2, verdict: 'revise', reason: 'Still no code ran.', tokens_in: 1, tokens_out: 1 },
    ];
    const doubted = fromHistory({ ...stored, verifications: revises });
    expect(doubted.verifications.map(isRevisionRequest)).toEqual([true, false]);
    expect(answerCheck(doubted)).toMatchObject({ verdict: 'revise', reason: 'Still no code ran.' });
    const failed = fromHistory({ ...stored, status: 'failed', final_answer: null, error: 'budget', verifications: revises });
    expect(failed.verifications.map(isRevisionRequest)).toEqual([true, true]);
    expect(answerCheck(failed)).toBeNull();
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
      inputs: [],
      approvals: [],
      pending: null,
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

describe('sandbox.starting', () => {
  it('holds from sandbox.starting until the next event', () => {
    const v = reduceRunEvents(emptyRun('r'), [
      runStarted('r', 1),
      { event: 'sandbox.starting', run_id: 'r', seq: 2, restoring: true },
    ]);
    expect(v.sandboxStarting).toEqual({ restoring: true });
    expect(reduceRunEvents(v, [{ event: 'step.started', run_id: 'r', seq: 3, step: 1 }]).sandboxStarting).toBeNull();
    expect(toRunEvent('sandbox.starting', '{"run_id":"r","seq":2,"restoring":false}')).toEqual({
      event: 'sandbox.starting',
      run_id: 'r',
      seq: 2,
      restoring: false,
    });
  });
});

describe('state.restored', () => {
  it("keeps how a branch's variables came back, as the event arrives", () => {
    const notes = ['Replayed 2 steps of 1 question.'];
    const v = reduceRunEvents(emptyRun('r'), [runStarted('r', 1), { event: 'state.restored', run_id: 'r', seq: 2, source: 'replay', notes }]);
    expect(v.restored).toEqual({ from: 'replay', notes });
    expect(emptyRun('r').restored).toBeNull();
    expect(reduceRunEvents(v, [{ event: 'step.started', run_id: 'r', seq: 3, step: 1 }]).restored).toEqual({ from: 'replay', notes });
  });
});

describe('step.queries', () => {
  const total = { source: 'shop', sql: 'SELECT region, SUM(amount) FROM orders GROUP BY region', rows: 3, duration_ms: 12, error: null };
  const refused = { source: 'shop', sql: 'DELETE FROM orders', rows: 0, duration_ms: 1, error: 'Only queries are allowed: DELETE changes the database.' };

  it("keeps a step's queries, adding those of each part of a step that went on after an answer", () => {
    const v = reduceRunEvents(emptyRun('r'), [
      runStarted('r', 1),
      { event: 'step.started', run_id: 'r', seq: 2, step: 1 },
      { event: 'step.queries', run_id: 'r', seq: 3, step: 1, queries: [total] },
      { event: 'input.requested', run_id: 'r', seq: 4, step: 1, question: 'Which year?' },
      { event: 'input.received', run_id: 'r', seq: 5, step: 1, question: 'Which year?', answer: '2026' },
      { event: 'step.queries', run_id: 'r', seq: 6, step: 1, queries: [refused] },
      { event: 'step.queries', run_id: 'r', seq: 6, step: 1, queries: [refused] },
    ]);
    expect(v.steps[0].queries).toEqual([total, refused]);
  });

  it("reads a stored step's queries, and none from a step stored without them", () => {
    const v = fromHistory(
      aStoredRun({
        steps: [
          { index: 1, thought: null, code: 'sql(…)', output: null, error: null, duration_ms: 40, tokens_in: 1, tokens_out: 1, queries: [total, refused] },
          { index: 2, thought: null, code: 'print(1)', output: '1', error: null, duration_ms: 4, tokens_in: 1, tokens_out: 1 },
        ],
      }),
    );
    expect(v.steps.map((s) => s.queries)).toEqual([[total, refused], []]);
  });
});
