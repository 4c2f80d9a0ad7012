import type { ApprovalDecision, ArtifactOut, VerificationOut } from '@/client';

/** The run's event stream as a typed union (see API.md, "The event stream"). */
type Base = { run_id: string; seq: number };

export type RunStatus = 'queued' | 'running' | 'waiting_input' | 'waiting_approval' | 'succeeded' | 'failed' | 'cancelled';

/** What the check of a final answer said: approve it, or send the agent back to revise it. */
export type Verdict = VerificationOut['verdict'];

/** What the user decided about a code block waiting in review mode. */
export type Decision = ApprovalDecision['decision'];

export type StreamArtifact = Pick<ArtifactOut, 'id' | 'kind' | 'name' | 'mime' | 'size' | 'url'> & { step?: number };

export type RunEvent =
  | (Base & { event: 'run.started'; session_id?: string; model?: string; query?: string })
  | (Base & { event: 'run.queued'; position: number })
  /** The session's sandbox is being started (seconds); `restoring`: its saved variables are loaded back. */
  | (Base & { event: 'sandbox.starting'; restoring: boolean })
  | (Base & { event: 'step.started'; step: number })
  | (Base & { event: 'model.delta'; step: number; text: string })
  | (Base & { event: 'step.code'; step: number; code: string })
  | (Base & { event: 'step.output'; step: number; output: string })
  | (Base & { event: 'step.error'; step: number; error: string })
  | (Base & { event: 'artifact'; step: number; artifact: StreamArtifact })
  | (Base & { event: 'step.finished'; step: number; duration_ms: number | null; tokens_in: number; tokens_out: number })
  | (Base & { event: 'plan.delta'; step: number; text: string })
  | (Base & { event: 'plan'; step: number; text: string; tokens_in: number; tokens_out: number })
  | (Base & {
      event: 'verification';
      step: number;
      verdict: Verdict;
      reason: string;
      tokens_in: number;
      tokens_out: number;
      /** No revision is left: the answer stands whatever the verdict. */
      final: boolean;
    })
  /** The code of `step` asked the user (ask_user); the run waits for POST /runs/{id}/input. */
  | (Base & { event: 'input.requested'; step: number; question: string })
  | (Base & { event: 'input.received'; step: number; question: string; answer: string })
  /** Review mode: the code of `step` waits for POST /runs/{id}/approval before it runs. */
  | (Base & { event: 'approval.requested'; step: number; code: string })
  /** `code` comes with an edit (it is what runs), `feedback` with a reject when the user gave some. */
  | (Base & { event: 'approval.received'; step: number; decision: Decision; code?: string | null; feedback?: string | null })
  | (Base & { event: 'final'; answer: string })
  | (Base & {
      event: 'run.finished';
      status: RunStatus;
      error: string | null;
      tokens_in: number;
      tokens_out: number;
      /** Some counts were estimated here: the model's server sent none. */
      tokens_estimated?: boolean;
      cost_usd: number | null;
      duration_ms: number | null;
    });

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
