/**
 * Attempts, verdicts and repairs as API.md ("Attempts and verdicts") defines them: the generated
 * client's types (`make client`), with the few names the attempts' views use.
 */
import type { RunEvent, SessionUpdate } from '@/client';

export type { AttemptOut, RepairOut, VerdictOut } from '@/client';

/** `POST /sessions/{id}/query` also takes `attempts` (1–5). */
export const MIN_ATTEMPTS = 1;
export const MAX_ATTEMPTS = 5;

/** The events of a run with attempts: attempt.started/finished, verdict and repair. */
export type AttemptEvent = Extract<RunEvent, { event: 'attempt.started' | 'attempt.finished' | 'verdict' | 'repair' }>;

/** A session's autonomy: `review_repairs` asks before repairs only. */
export type Autonomy = NonNullable<SessionUpdate['autonomy']>;
