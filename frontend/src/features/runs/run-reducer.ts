import type { RunOut } from '@/client';
import { isTerminal, type RunEvent, type RunStatus, type StreamArtifact, type Verdict } from './events';

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

export type RunView = {
  runId: string;
  query: string;
  model: string | null;
  status: RunStatus;
  /** Place in the queue for a sandbox worker (1: next), while the run is queued. */
  queuePosition: number | null;
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
  question: string | null;
  error: string | null;
  tokensIn: number;
  tokensOut: number;
  costUsd: number | null;
  durationMs: number | null;
};

export function emptyRun(runId: string, query = '', model: string | null = null): RunView {
  return {
    runId,
    query,
    model,
    status: 'queued',
    queuePosition: null,
    lastSeq: 0,
    pending: [],
    steps: [],
    plans: [],
    verifications: [],
    artifacts: [],
    answer: null,
    question: null,
    error: null,
    tokensIn: 0,
    tokensOut: 0,
    costUsd: null,
    durationMs: null,
  };
}

function newStep(index: number): StepView {
  return { index, thought: '', code: null, output: null, error: null, durationMs: null, tokensIn: 0, tokensOut: 0, finished: false };
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

/** Applies one event known to be the next in sequence. */
function apply(v: RunView, e: RunEvent): RunView {
  // Any event after input.requested means the run got its answer and goes on.
  const status: RunStatus = v.status === 'queued' || v.status === 'waiting_input' ? 'running' : v.status;
  const next = { ...v, lastSeq: e.seq, status };
  switch (e.event) {
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
    case 'artifact':
      if (next.artifacts.some((a) => a.id === e.artifact.id)) return next;
      return { ...next, artifacts: [...next.artifacts, { ...e.artifact, step: e.artifact.step ?? e.step }] };
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
      return { ...next, status: 'waiting_input', question: e.question };
    case 'final':
      return { ...next, answer: e.answer };
    case 'run.finished':
      return {
        ...next,
        status: e.status,
        error: e.error,
        question: null,
        tokensIn: e.tokens_in,
        tokensOut: e.tokens_out,
        costUsd: e.cost_usd,
        durationMs: e.duration_ms,
        steps: next.steps.map((s) => ({ ...s, finished: true })),
        plans: next.plans.map((p) => ({ ...p, streaming: false })),
      };
    default:
      return next;
  }
}

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

/** Builds the same view from a stored run (GET /sessions/{id}/runs). */
export function fromHistory(run: RunOut): RunView {
  return {
    ...emptyRun(run.id, run.query, run.model),
    status: run.status,
    steps: run.steps.map((s) => ({
      index: s.index,
      thought: s.thought ?? '',
      code: s.code ?? null,
      output: s.output ?? null,
      error: s.error ?? null,
      durationMs: s.duration_ms ?? null,
      tokensIn: s.tokens_in,
      tokensOut: s.tokens_out,
      finished: true,
    })),
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
    answer: run.final_answer ?? null,
    error: run.error ?? null,
    tokensIn: run.tokens_in,
    tokensOut: run.tokens_out,
    costUsd: run.cost_usd ?? null,
    durationMs:
      run.started_at && run.finished_at ? new Date(run.finished_at).getTime() - new Date(run.started_at).getTime() : null,
  };
}
