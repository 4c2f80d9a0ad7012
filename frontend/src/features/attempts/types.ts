/**
 * Attempts, verdicts and repairs as API.md ("Attempts and verdicts") defines them. The generated
 * client (src/client) does not have them yet: these local types match the contract field for
 * field, and give way to the generated ones once `make client` is run on a backend that has them.
 */

/** `POST /sessions/{id}/query` also takes `attempts` (1–5). */
export const MIN_ATTEMPTS = 1;
export const MAX_ATTEMPTS = 5;

/** How the attempts' answers compared: all agree, a majority, a judge chose, or it could not be told. */
export type VerdictOutcome = 'agree' | 'majority' | 'judged' | 'undecided';

/** The `verdict` event's data (beyond run_id, seq), and a run's `verdict`. */
export type VerdictOut = {
  /** "3/3": how many attempts are in the chosen group, of how many. */
  agreement: string;
  outcome: VerdictOutcome;
  /** The attempt whose answer is the run's (1…N); null when none could be chosen. */
  chosen: number | null;
  groups: { answer: string | null; attempts: number[] }[];
  reason: string | null;
};

/** One attempt as a stored run lists it (`run.attempts`). */
export type AttemptOut = {
  attempt: number;
  strategy: string;
  model: string;
  status: string;
  answer: string | null;
  tokens_in: number;
  tokens_out: number;
  cost_usd: number | null;
};

/** A repair's fan-out: the strategies tried for a failing step, and which one (1-based) continued. */
export type RepairOut = { step: number; strategies: string[]; chosen: number | null };

type Base = { run_id: string; seq: number };

/** The events the generated RunEvent union does not have yet. */
export type AttemptEvent =
  | (Base & { event: 'attempt.started'; attempt: number; strategy: string; model: string | null })
  | (Base & { event: 'attempt.finished'; attempt: number; status: string; answer: string | null })
  | (Base & { event: 'verdict' } & VerdictOut)
  | (Base & { event: 'repair'; attempt?: number } & RepairOut);

/** A session's autonomy: `review_repairs` asks before repairs only. */
export type Autonomy = 'auto' | 'review_repairs' | 'review';

/** What a stored run and project carry beyond the generated client's types. */
export type RunAttemptsFields = { attempts?: AttemptOut[] | null; verdict?: VerdictOut | null; repairs?: RepairOut[] | null };
export type ProjectAttemptsFields = { default_attempts?: number | null };
