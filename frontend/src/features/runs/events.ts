import type { ApprovalDecision, ArtifactOut, RunEvent as StreamedEvent, RunStatus as Status, VerificationOut } from '@/client';

/**
 * The run's event stream as a typed union (API.md, "The event stream"): each message's
 * `event:` line with its data. Generated (`make client`) from the backend's definitions of
 * the events (backend/app/runs/events.py), published in its OpenAPI document as `RunEvent`.
 */
export type RunEvent = StreamedEvent;

export type RunStatus = Status;

/** What the check of a final answer said: approve it, or send the agent back to revise it. */
export type Verdict = VerificationOut['verdict'];

/** What the user decided about a code block waiting in review mode. */
export type Decision = ApprovalDecision['decision'];

/** An artifact as a run's view keeps it (from the stream, or from the run's history). */
export type StreamArtifact = Pick<ArtifactOut, 'id' | 'kind' | 'name' | 'mime' | 'size' | 'url'> & { step?: number };

export const TERMINAL: RunStatus[] = ['succeeded', 'failed', 'cancelled'];

export const isTerminal = (s: RunStatus) => TERMINAL.includes(s);

/** Turns an SSE message into a typed event, or null for unknown/malformed ones. */
export function toRunEvent(event: string, data: string): RunEvent | null {
  try {
    const parsed = JSON.parse(data) as Record<string, unknown>;
    if (typeof parsed.seq !== 'number' || typeof parsed.run_id !== 'string') return null;
    return { ...parsed, event } as RunEvent;
  } catch {
    return null;
  }
}
