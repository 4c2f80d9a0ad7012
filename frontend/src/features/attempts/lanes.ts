import type { RunOut } from '@/client';
import type { RunEvent, RunStatus } from '@/features/runs/events';
import type { RunView } from '@/features/runs/run-reducer';
import type { AttemptEvent, AttemptOut, RepairOut, VerdictOut } from './types';

/** One attempt of a question asked with `attempts` > 1, as its lane shows it. */
export type AttemptLane = {
  attempt: number;
  /** Its short strategy label ("pandas", "SQL/DuckDB", "a second way"). */
  strategy: string;
  model: string | null;
  /** `running` until attempt.finished says how it ended (succeeded, failed, cancelled…). */
  status: string;
  /** Its final answer, from attempt.finished (or its own `final` event). */
  answer: string | null;
  tokensIn: number | null;
  tokensOut: number | null;
  costUsd: number | null;
  /** The attempt's own steps, code, outputs and artifacts: a run's view of the events that carry its number. */
  view: RunView;
};

/** How the run reducer applies an event to a view, and makes an empty one: given, so this module needs no runtime import of it. */
export type RunOps = { apply: (v: RunView, e: RunEvent) => RunView; empty: (runId: string) => RunView };

/** Whether a run was asked with more than one attempt: its view shows lanes and a verdict. */
export const hasAttempts = (v: RunView) => v.attempts.length > 0 || v.verdict != null;

function newLane(v: RunView, attempt: number, ops: RunOps): AttemptLane {
  return { attempt, strategy: '', model: null, status: 'running', answer: null, tokensIn: null, tokensOut: null, costUsd: null, view: ops.empty(v.runId) };
}

function withLane(v: RunView, attempt: number, ops: RunOps, f: (l: AttemptLane) => AttemptLane): RunView {
  const i = v.attempts.findIndex((l) => l.attempt === attempt);
  if (i === -1) return { ...v, attempts: [...v.attempts, f(newLane(v, attempt, ops))].sort((a, b) => a.attempt - b.attempt) };
  const attempts = v.attempts.slice();
  attempts[i] = f(attempts[i]);
  return { ...v, attempts };
}

const finishSteps = (view: RunView): RunView => ({ ...view, steps: view.steps.map((s) => ({ ...s, finished: true })) });

/** The chosen attempt's answer and results become the run's, unless the run sent its own. */
function chosenResult(v: RunView, verdict: VerdictOut): RunView {
  const lane = verdict.chosen != null ? v.attempts.find((l) => l.attempt === verdict.chosen) : undefined;
  if (!lane) return v;
  return {
    ...v,
    answer: v.answer ?? lane.answer ?? lane.view.answer,
    artifacts: v.artifacts.length ? v.artifacts : lane.view.artifacts,
  };
}

const isWaiting = (s: RunStatus) => s === 'waiting_input' || s === 'waiting_approval';

/**
 * Applies an event of a run with attempts: attempt.started/finished, verdict and repair, and every
 * event that carries an `attempt` (into that attempt's lane, as the run reducer would apply it to a
 * run). Null for any other event: the run reducer applies it as before. `v` is the run's view with
 * its seq and status already advanced past `e`.
 */
export function applyAttemptEvent(v: RunView, e: RunEvent, ops: RunOps): RunView | null {
  const a = e as unknown as AttemptEvent | (RunEvent & { attempt?: unknown });
  switch (a.event) {
    case 'attempt.started':
      if (a.attempt == null) return v;
      return withLane(v, a.attempt, ops, (l) => ({ ...l, strategy: a.strategy, model: a.model ?? null, status: 'running' }));
    case 'attempt.finished':
      if (a.attempt == null) return v;
      return withLane(v, a.attempt, ops, (l) => ({ ...l, status: a.status, answer: a.answer ?? l.view.answer, view: finishSteps(l.view) }));
    case 'verdict': {
      const { agreement, outcome, chosen, groups, reason } = a;
      const verdict: VerdictOut = { agreement, outcome, chosen: chosen ?? null, groups: groups ?? [], reason: reason ?? null };
      return chosenResult({ ...v, verdict }, verdict);
    }
    case 'repair': {
      const repair: RepairOut = { step: a.step, strategies: a.strategies ?? [], chosen: a.chosen ?? null, reasons: a.reasons ?? [] };
      if (typeof a.attempt === 'number') return withLane(v, a.attempt, ops, (l) => ({ ...l, view: { ...l.view, repairs: [...l.view.repairs, repair] } }));
      return { ...v, repairs: [...v.repairs, repair] };
    }
  }
  const attempt = (a as { attempt?: unknown }).attempt;
  if (typeof attempt !== 'number' || a.event === 'run.finished' || a.event === 'run.started') return null;
  const routed = withLane(v, attempt, ops, (l) => ({ ...l, view: ops.apply(l.view, e) }));
  // An attempt waiting for the user (a repair to approve, a question) makes the run wait.
  const lane = routed.attempts.find((l) => l.attempt === attempt);
  return lane && isWaiting(lane.view.status) ? { ...routed, status: lane.view.status } : routed;
}

/** At run.finished: attempts that never said how they ended end as the run did; every step is done. */
export function finishLanes(lanes: AttemptLane[], status: RunStatus): AttemptLane[] {
  return lanes.map((l) => ({ ...l, status: l.status === 'running' ? status : l.status, view: finishSteps(l.view) }));
}

/**
 * Builds a stored run's view (GET run, with its `attempts` and `verdict`) with `build`, the run
 * reducer's view of a history: steps and artifacts that say which attempt they belong to go into
 * that attempt's lane, the rest stay the run's. The attempts' own steps come from the run's stored
 * events when the history has none of them (useStoredLanes).
 */
export function fromStoredAttempts(run: RunOut, build: (run: RunOut) => RunView): RunView {
  const attempts = run.attempts ?? [];
  if (!attempts.length && !run.verdict) return build(run);
  const attemptOf = (x: object) => (x as { attempt?: unknown }).attempt;
  const own = <T extends object>(xs: T[]) => xs.filter((x) => typeof attemptOf(x) !== 'number');
  const of = <T extends object>(xs: T[], n: number) => xs.filter((x) => attemptOf(x) === n);
  const verdict = run.verdict ?? null;
  const repairs = run.repairs ?? [];
  // The run's results are the chosen attempt's, and any the run made itself.
  const artifacts = run.artifacts.filter((x) => typeof attemptOf(x) !== 'number' || attemptOf(x) === verdict?.chosen);
  const v = build({ ...run, steps: own(run.steps), artifacts, repairs: own(repairs) });
  const lanes = attempts.map((a: AttemptOut): AttemptLane => {
    const view = build({
      ...run,
      steps: of(run.steps, a.attempt),
      artifacts: of(run.artifacts, a.attempt),
      repairs: of(repairs, a.attempt),
      final_answer: a.answer ?? null,
      error: null,
      plans: [],
      verifications: [],
      inputs: [],
      approvals: [],
      pending: null,
    });
    return {
      attempt: a.attempt,
      strategy: a.strategy,
      model: a.model ?? null,
      status: a.status,
      answer: a.answer ?? null,
      tokensIn: a.tokens_in ?? null,
      tokensOut: a.tokens_out ?? null,
      costUsd: a.cost_usd ?? null,
      view,
    };
  });
  const next = { ...v, attempts: lanes, verdict };
  return verdict ? chosenResult(next, verdict) : next;
}
