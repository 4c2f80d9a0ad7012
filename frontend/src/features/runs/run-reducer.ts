import type { QueryOut, RunOut } from '@/client';
import { applyAttemptEvent, finishLanes, fromStoredAttempts, type AttemptLane, type RunOps } from '@/features/attempts/lanes';
import type { RepairOut, VerdictOut } from '@/features/attempts/types';
import { isTerminal, type Decision, type RunEvent, type RunStatus, type StreamArtifact, type Verdict } from './events';

export type StepView = {
  index: number;
  /** The model's streamed text for this step (or the stored thought from history). */
  thought: string;
  code: string | null;
  output: string | null;
  error: string | null;
  durationMs: number | null;
  tokensIn: number;
  tokensOut: number;
  finished: boolean;
  /** The queries its code ran on the project's data sources (`sql()`), in the order they ran. */
  queries: QueryOut[];
};

export type PlanView = {
  /** The plan was written before this step (1: the first plan; later: a revision). */
  step: number;
  text: string;
  /** Streaming from plan.delta until the `plan` event replaces it with the finished text. */
  streaming: boolean;
  tokensIn: number;
  tokensOut: number;
};

export type VerificationView = {
  /** The step whose final answer was checked. */
  step: number;
  verdict: Verdict;
  reason: string;
  /** No revision was left, so the answer stood whatever the verdict. */
  final: boolean;
  tokensIn: number;
  tokensOut: number;
};

/** A question the agent's code asked the user (ask_user), after the step that asked. */
export type QuestionView = {
  step: number;
  question: string;
  /** Null until the user answers (or for good, if the run ended first). */
  answer: string | null;
};

/** Review mode: the user's decision on the code of a step, which waited for it. */
export type ApprovalView = {
  step: number;
  /** Null while the code waits. */
  decision: Decision | null;
  /** The code that ran instead of the agent's (an edit). */
  code: string | null;
  /** Why the code was rejected, if the user said. */
  feedback: string | null;
};

export type RunView = {
  runId: string;
  query: string;
  model: string | null;
  status: RunStatus;
  /** Place in the queue for a sandbox worker (1: next), while the run is queued. */
  queuePosition: number | null;
  /** The session's sandbox is starting (from sandbox.starting until the next event). */
  sandboxStarting: { restoring: boolean } | null;
  /** A branch's first run: how its variables came back (state.restored), as it arrived. */
  restored: { from: 'snapshot' | 'replay'; notes: string[] } | null;
  /** Highest seq applied; every event up to it has been applied exactly once. */
  lastSeq: number;
  /** Events that arrived ahead of a gap, kept sorted by seq until the gap is filled. */
  pending: RunEvent[];
  steps: StepView[];
  /** The agent's plans, by the step they were written before. */
  plans: PlanView[];
  /** The checks of its final answers, in the order they happened. */
  verifications: VerificationView[];
  artifacts: StreamArtifact[];
  answer: string | null;
  /** The agent's questions to the user and the answers, in the order they were asked. */
  inputs: QuestionView[];
  /** Decisions on code blocks in review mode (and the one waiting, undecided). */
  approvals: ApprovalView[];
  error: string | null;
  tokensIn: number;
  tokensOut: number;
  /** The counts are (partly) estimated: the model's server did not report them. */
  tokensEstimated: boolean;
  costUsd: number | null;
  durationMs: number | null;
  /** Asked with `attempts` > 1: each attempt's lane (its steps from the events carrying its number). */
  attempts: AttemptLane[];
  /** How the attempts' answers compared, once they are in. */
  verdict: VerdictOut | null;
  /** Parallel repairs of failing steps (`repair` events), in the order they happened. */
  repairs: RepairOut[];
};

export function emptyRun(runId: string, query = '', model: string | null = null): RunView {
  return {
    runId,
    query,
    model,
    status: 'queued',
    queuePosition: null,
    sandboxStarting: null,
    restored: null,
    lastSeq: 0,
    pending: [],
    steps: [],
    plans: [],
    verifications: [],
    artifacts: [],
    answer: null,
    inputs: [],
    approvals: [],
    error: null,
    tokensIn: 0,
    tokensOut: 0,
    tokensEstimated: false,
    costUsd: null,
    durationMs: null,
    attempts: [],
    verdict: null,
    repairs: [],
  };
}

function newStep(index: number): StepView {
  return { index, thought: '', code: null, output: null, error: null, durationMs: null, tokensIn: 0, tokensOut: 0, finished: false, queries: [] };
}

function withStep(v: RunView, index: number, f: (s: StepView) => StepView): RunView {
  const i = v.steps.findIndex((s) => s.index === index);
  if (i === -1) return { ...v, steps: [...v.steps, f(newStep(index))].sort((a, b) => a.index - b.index) };
  const steps = v.steps.slice();
  steps[i] = f(steps[i]);
  return { ...v, steps };
}

function withPlan(v: RunView, step: number, f: (p: PlanView) => PlanView): RunView {
  const i = v.plans.findIndex((p) => p.step === step);
  if (i === -1) {
    const fresh: PlanView = { step, text: '', streaming: true, tokensIn: 0, tokensOut: 0 };
    return { ...v, plans: [...v.plans, f(fresh)].sort((a, b) => a.step - b.step) };
  }
  const plans = v.plans.slice();
  plans[i] = f(plans[i]);
  return { ...v, plans };
}

/** A check that sent the agent back to work: it belongs in the flow of steps, where it happened. */
export const isRevisionRequest = (c: VerificationView) => c.verdict === 'revise' && !c.final;

/** The check of the answer the user sees (approved, or standing with the check's doubts), if any. */
export function answerCheck(v: RunView): VerificationView | null {
  const last = v.verifications[v.verifications.length - 1];
  return v.answer != null && last && !isRevisionRequest(last) ? last : null;
}

/** The question the run waits to have answered, if it waits for one. */
export function openQuestion(v: RunView): QuestionView | null {
  const last = v.inputs[v.inputs.length - 1];
  return v.status === 'waiting_input' && last && last.answer == null ? last : null;
}

/** The code block the run waits to have approved, edited or rejected, if it waits for one. */
export function openApproval(v: RunView): ApprovalView | null {
  const last = v.approvals[v.approvals.length - 1];
  return v.status === 'waiting_approval' && last && last.decision == null ? last : null;
}

/** Replaces the entry of `step` (the latest one for it), or adds one. */
function upsert<T extends { step: number }>(list: T[], step: number, entry: T): T[] {
  const i = list.findLastIndex((x) => x.step === step);
  if (i === -1) return [...list, entry];
  const next = list.slice();
  next[i] = entry;
  return next;
}

/** A question of a step: a step may ask several in turn (each after the last was answered). */
function asked(list: QuestionView[], entry: QuestionView): QuestionView[] {
  const latest = list.findLast((x) => x.step === entry.step);
  return latest && latest.answer != null ? [...list, entry] : upsert(list, entry.step, entry);
}

const isWaiting = (s: RunStatus) => s === 'waiting_input' || s === 'waiting_approval';

/** What every event does: advances the seq; any event after input.requested/approval.requested means the user replied and the run goes on; the sandbox has started once anything else happens. */
function advance(v: RunView, e: RunEvent): RunView {
  const status: RunStatus = v.status === 'queued' || isWaiting(v.status) ? 'running' : v.status;
  return { ...v, lastSeq: e.seq, status, sandboxStarting: null };
}

/** Applies one event known to be the next in sequence; a run asked with several attempts sends theirs to their lanes (features/attempts). */
function apply(v: RunView, e: RunEvent): RunView {
  return applyAttemptEvent(advance(v, e), e, OPS) ?? applyOwn(v, e);
}

/** Applies an event to the view it belongs to: the run's, or (from features/attempts) one attempt's lane. */
function applyOwn(v: RunView, e: RunEvent): RunView {
  const next = advance(v, e);
  switch (e.event) {
    case 'sandbox.starting':
      return { ...next, sandboxStarting: { restoring: !!e.restoring } };
    case 'state.restored':
      return { ...next, restored: { from: e.source, notes: e.notes ?? [] } };
    case 'run.queued':
      return { ...next, status: 'queued', queuePosition: e.position };
    case 'run.started':
      return { ...next, status: 'running', queuePosition: null, query: e.query ?? next.query, model: e.model ?? next.model };
    case 'step.started':
      return withStep(next, e.step, (s) => s);
    case 'model.delta':
      return withStep(next, e.step, (s) => ({ ...s, thought: s.thought + e.text }));
    case 'step.code':
      return withStep(next, e.step, (s) => ({ ...s, code: e.code }));
    case 'step.output':
      return withStep(next, e.step, (s) => ({ ...s, output: (s.output ?? '') + e.output }));
    case 'step.error':
      return withStep(next, e.step, (s) => ({ ...s, error: s.error ? `${s.error}\n${e.error}` : e.error }));
    case 'step.queries':
      // A step that went on after the user's answer sends the queries of each part it ran.
      return withStep(next, e.step, (s) => ({ ...s, queries: [...s.queries, ...e.queries] }));
    case 'artifact':
      if (next.artifacts.some((a) => a.id === e.artifact.id)) return next;
      return { ...next, artifacts: [...next.artifacts, e.artifact] };
    case 'step.finished':
      return withStep(next, e.step, (s) => ({
        ...s,
        finished: true,
        durationMs: e.duration_ms,
        tokensIn: e.tokens_in,
        tokensOut: e.tokens_out,
      }));
    case 'plan.delta':
      // A delta after the finished plan of the same step starts that plan over.
      return withPlan(next, e.step, (p) => ({ ...p, text: p.streaming ? p.text + e.text : e.text, streaming: true }));
    case 'plan':
      return withPlan(next, e.step, (p) => ({ ...p, text: e.text, streaming: false, tokensIn: e.tokens_in, tokensOut: e.tokens_out }));
    case 'verification':
      return {
        ...next,
        verifications: [
          ...next.verifications,
          { step: e.step, verdict: e.verdict, reason: e.reason, final: e.final, tokensIn: e.tokens_in, tokensOut: e.tokens_out },
        ],
      };
    case 'input.requested':
      return { ...next, status: 'waiting_input', inputs: asked(next.inputs, { step: e.step, question: e.question, answer: null }) };
    case 'input.received':
      return { ...next, inputs: upsert(next.inputs, e.step, { step: e.step, question: e.question, answer: e.answer }) };
    case 'approval.requested': {
      // The step streamed its code already; this is the code that waits (the step has not run).
      const waiting = withStep(next, e.step, (s) => ({ ...s, code: e.code }));
      return {
        ...waiting,
        status: 'waiting_approval',
        approvals: upsert(next.approvals, e.step, { step: e.step, decision: null, code: null, feedback: null }),
      };
    }
    case 'approval.received': {
      const decided: ApprovalView = { step: e.step, decision: e.decision, code: e.code ?? null, feedback: e.feedback ?? null };
      // An edit is what runs: step.code repeats it, but the card shows it from the moment it is decided.
      const edited = e.decision === 'edit' && e.code ? withStep(next, e.step, (s) => ({ ...s, code: e.code ?? s.code })) : next;
      return { ...edited, approvals: upsert(next.approvals, e.step, decided) };
    }
    case 'final':
      return { ...next, answer: e.answer };
    case 'run.finished':
      return {
        ...next,
        status: e.status,
        error: e.error,
        tokensIn: e.tokens_in,
        tokensOut: e.tokens_out,
        tokensEstimated: !!e.tokens_estimated,
        costUsd: e.cost_usd,
        durationMs: e.duration_ms,
        steps: next.steps.map((s) => ({ ...s, finished: true })),
        plans: next.plans.map((p) => ({ ...p, streaming: false })),
        attempts: finishLanes(next.attempts, e.status),
      };
    default:
      return next;
  }
}

const OPS: RunOps = { apply: applyOwn, empty: (runId) => emptyRun(runId) };

/**
 * Pure reducer over a run's events keyed by seq: duplicates (seq already applied or already
 * buffered) are ignored, events ahead of a gap wait in `pending` until the gap is filled (by a
 * resume with Last-Event-ID), and everything is applied strictly in seq order.
 */
export function reduceRun(v: RunView, e: RunEvent): RunView {
  if (e.run_id !== v.runId || e.seq <= v.lastSeq || v.pending.some((p) => p.seq === e.seq)) return v;
  if (e.seq !== v.lastSeq + 1) {
    return { ...v, pending: [...v.pending, e].sort((a, b) => a.seq - b.seq) };
  }
  let next = apply(v, e);
  while (next.pending.length && next.pending[0].seq === next.lastSeq + 1) {
    const [head, ...rest] = next.pending;
    next = apply({ ...next, pending: rest }, head);
  }
  return next;
}

export const reduceRunEvents = (v: RunView, events: RunEvent[]) => events.reduce(reduceRun, v);

export const isFinished = (v: RunView) => isTerminal(v.status);

/** Builds the same view from a stored run (GET /sessions/{id}/runs), with its attempts' lanes and verdict if it had several. */
export const fromHistory = (run: RunOut): RunView => fromStoredAttempts(run, fromOwnHistory);

function fromOwnHistory(run: RunOut): RunView {
  const pending = run.pending;
  const rejected = new Set(run.approvals.filter((a) => a.decision === 'reject').map((a) => a.step));
  const steps: StepView[] = run.steps.map((s) => ({
    index: s.index,
    thought: s.thought ?? '',
    code: s.code ?? null,
    output: s.output ?? null,
    // A rejected step's stored error ("Rejected by the user: …") is the decision, shown as such.
    error: rejected.has(s.index) ? null : (s.error ?? null),
    durationMs: s.duration_ms ?? null,
    tokensIn: s.tokens_in,
    tokensOut: s.tokens_out,
    finished: true,
    queries: s.queries ?? [],
  }));
  // The step waiting for approval has no stored row yet: only its code.
  if (pending?.kind === 'approval' && !steps.some((s) => s.index === pending.step)) {
    steps.push({ ...newStep(pending.step), code: pending.code ?? null });
  }
  const inputs: QuestionView[] = run.inputs.map((i) => ({ step: i.step, question: i.question, answer: i.answer }));
  if (pending?.kind === 'input') inputs.push({ step: pending.step, question: pending.question ?? '', answer: null });
  const approvals: ApprovalView[] = run.approvals.map((a) => ({ step: a.step, decision: a.decision, code: a.code ?? null, feedback: a.feedback ?? null }));
  if (pending?.kind === 'approval') approvals.push({ step: pending.step, decision: null, code: null, feedback: null });
  return {
    ...emptyRun(run.id, run.query, run.model),
    status: run.status,
    steps: steps.sort((a, b) => a.index - b.index),
    inputs,
    approvals,
    plans: run.plans.map((p) => ({ step: p.step, text: p.text, streaming: false, tokensIn: p.tokens_in, tokensOut: p.tokens_out })),
    // Stored checks carry no `final` flag: the last check of a succeeded run is about its answer.
    verifications: run.verifications.map((c, i, all) => ({
      step: c.step,
      verdict: c.verdict,
      reason: c.reason,
      final: run.status === 'succeeded' && i === all.length - 1,
      tokensIn: c.tokens_in,
      tokensOut: c.tokens_out,
    })),
    artifacts: run.artifacts.map((a) => ({ id: a.id, kind: a.kind, name: a.name, mime: a.mime, size: a.size, url: a.url, step: a.step })),
    // The parallel repairs, as the run's stored `repair` events told them: shown after a reload as live.
    repairs: (run.repairs ?? []).map((r) => ({ step: r.step, strategies: r.strategies, chosen: r.chosen ?? null, reasons: r.reasons ?? [] })),
    answer: run.final_answer ?? null,
    error: run.error ?? null,
    tokensIn: run.tokens_in,
    tokensOut: run.tokens_out,
    tokensEstimated: !!run.tokens_estimated,
    costUsd: run.cost_usd ?? null,
    durationMs:
      run.started_at && run.finished_at ? new Date(run.finished_at).getTime() - new Date(run.started_at).getTime() : null,
  };
}
