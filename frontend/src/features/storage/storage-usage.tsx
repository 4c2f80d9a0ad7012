import { useQuery } from '@tanstack/react-query';
import { HardDrive } from 'lucide-react';
import type { StorageUsageOut } from '@/client';
import { cn, formatBytes } from '@/lib/utils';
import { myStorageQuery, projectStorageQuery } from './queries';

function plural(n: number, word: string): string {
  return `${n.toLocaleString()} ${word}${n === 1 ? '' : 's'}`;
}

/** What fills the storage, in a line: files and versions, copies, artifacts and snapshots. */
export function storageBreakdown(usage: StorageUsageOut): string {
  const parts = [`${formatBytes(usage.files_bytes)} in ${plural(usage.files, 'file')} (${plural(usage.versions, 'version')})`];
  if (usage.copies_bytes) parts.push(`${formatBytes(usage.copies_bytes)} of preview copies`);
  parts.push(`${formatBytes(usage.artifacts_bytes + usage.snapshots_bytes)} of artifacts and snapshots`);
  return parts.join(', ');
}

/** "1.2 GB of 2.0 GB" with a bar (or "… used, no quota"). */
export function StorageBar({ usage, label, testId }: { usage: StorageUsageOut; label: string; testId: string }) {
  const quota = usage.quota_bytes;
  const percent = quota ? (100 * usage.used_bytes) / quota : 0;
  const state = quota == null ? 'ok' : percent >= 100 ? 'reached' : percent >= 80 ? 'near' : 'ok';
  const text = quota == null ? `${formatBytes(usage.used_bytes)} used, no quota` : `${formatBytes(usage.used_bytes)} of ${formatBytes(quota)}`;
  return (
    <div className="space-y-1" data-testid={testId}>
      {quota != null && (
        <div
          role="progressbar"
          aria-label={label}
          aria-valuemin={0}
          aria-valuemax={100}
          aria-valuenow={Math.min(100, Math.floor(percent))}
          aria-valuetext={text}
          data-state={state}
          className="h-2 overflow-hidden rounded-full bg-muted"
        >
          <div
            className={cn(
              'h-full rounded-full transition-[width]',
              state === 'reached' ? 'bg-destructive' : state === 'near' ? 'bg-amber-500' : 'bg-primary',
            )}
            style={{ width: `${Math.min(100, percent)}%` }}
          />
        </div>
      )}
      <p className={cn('flex justify-between gap-2 text-xs tabular-nums', state === 'reached' ? 'text-destructive' : 'text-muted-foreground')}>
        <span data-testid={`${testId}-text`}>{text}</span>
        {quota != null && <span>{Math.floor(percent).toLocaleString()} %</span>}
      </p>
    </div>
  );
}

/** The project's storage against its quota, and what fills it. */
export function ProjectStorage({ projectId }: { projectId: string }) {
  const usage = useQuery(projectStorageQuery(projectId));
  if (!usage.data) return null;
  const full = usage.data.quota_bytes != null && usage.data.used_bytes >= usage.data.quota_bytes;
  return (
    <section aria-labelledby="storage-heading" className="space-y-3" data-testid="project-storage">
      <div>
        <h2 id="storage-heading" className="flex items-center gap-2 text-base font-semibold">
          <HardDrive className="size-4 text-muted-foreground" /> Storage
        </h2>
        <p className="text-sm text-muted-foreground">
          Every kept version of the project's files, the copies made for previews, and what its sessions keep. Uploads past the quota are refused.
        </p>
      </div>
      <div className="space-y-2 rounded-lg border bg-card px-4 py-3">
        <StorageBar usage={usage.data} label="Project storage used" testId="project-storage-bar" />
        <p className="text-xs text-muted-foreground" data-testid="project-storage-breakdown">
          {storageBreakdown(usage.data)}
        </p>
        {full && (
          <p role="status" className="text-xs font-medium text-destructive">
            The quota is reached: delete files or old versions, or ask an administrator to raise it.
          </p>
        )}
        {usage.data.snapshots_refused && (
          <p role="alert" className="text-xs text-destructive" data-testid="project-snapshots-refused">
            {usage.data.snapshots_refused}
          </p>
        )}
      </div>
    </section>
  );
}

/** The signed-in user's own storage, in every project, for the account menu. */
export function MyStorage() {
  const usage = useQuery(myStorageQuery());
  if (!usage.data) return null;
  return (
    <div className="space-y-1 px-2 py-1.5" data-testid="my-storage">
      <p className="text-xs font-medium text-foreground">Your storage</p>
      <StorageBar usage={usage.data} label="Your storage used" testId="my-storage-bar" />
      <p className="text-[11px] text-muted-foreground">{storageBreakdown(usage.data)}</p>
    </div>
  );
}
