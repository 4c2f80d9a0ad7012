import { useQuery } from '@tanstack/react-query';
import { ShieldAlert, ShieldOff } from 'lucide-react';
import type { SandboxStatusOut } from '@/client';
import { sandboxStatusQuery } from './queries';

const sentence = (s: string) => s.trim().replace(/[.\s]+$/, '');

/** "Analysis is disabled: <detail>. Fix: <fix>." — also the reason the composer is disabled. */
export function disabledReason(status: Pick<SandboxStatusOut, 'detail' | 'fix'>): string {
  const fix = status.fix ? ` Fix: ${sentence(status.fix)}.` : '';
  return `Analysis is disabled: ${sentence(status.detail)}.${fix}`;
}

export function SandboxBannerView({ status }: { status: SandboxStatusOut | undefined }) {
  if (!status) return null;
  if (!status.available) {
    return (
      <div
        role="alert"
        data-testid="sandbox-banner"
        data-state="unavailable"
        className="flex items-start gap-2 border-b border-destructive/30 bg-destructive/10 px-4 py-2 text-sm text-destructive"
      >
        <ShieldOff className="mt-0.5 size-4 shrink-0" />
        <p>{disabledReason(status)}</p>
      </div>
    );
  }
  if (!status.isolated) {
    return (
      <div
        role="status"
        data-testid="sandbox-banner"
        data-state="not-isolated"
        className="flex items-start gap-2 border-b border-amber-500/30 bg-amber-500/10 px-4 py-2 text-sm text-amber-800 dark:text-amber-300"
      >
        <ShieldAlert className="mt-0.5 size-4 shrink-0" />
        <p>
          Analysis code is not isolated (<code className="font-mono">SANDBOX_ISOLATION=none</code>): use this only for a single
          trusted user.
        </p>
      </div>
    );
  }
  return null;
}

/** A banner across the top of the app while analysis is disabled or runs without isolation. */
export function SandboxBanner() {
  const status = useQuery(sandboxStatusQuery());
  return <SandboxBannerView status={status.data} />;
}
