import { BellRing, Loader2, Plus, Trash2 } from 'lucide-react';
import { useId, useState } from 'react';
import { toast } from 'sonner';
import { FormError } from '@/components/form-error';
import { Button } from '@/components/ui/button';
import { Input, Label } from '@/components/ui/input';
import { alertCondition, deliveryText, draftToAlert, emptyDraft, needsResult, needsValue, WHENS, type AlertDraft } from './alert-form';
import { useUpdateJob } from './mutations';
import type { Job, JobAlert } from './types';

const failure = (e: unknown) => (e instanceof Error && e.message ? e.message : 'The alerts could not be saved.');

/**
 * The job's alerts: each as a sentence (the condition, where it goes), removable by editors;
 * and a form to add one. Saving sends all of them (PATCH alerts); a webhook's secret comes back
 * as `***` and is sent back as it is, which keeps it.
 */
export function JobAlerts({ job, editor }: { job: Job; editor: boolean }) {
  const update = useUpdateJob(job);
  const [adding, setAdding] = useState(false);
  const save = (alerts: JobAlert[], done?: () => void) =>
    update.mutate(
      { alerts },
      {
        onSuccess: () => {
          toast.success('Alerts saved.');
          done?.();
        },
      },
    );
  return (
    <div className="space-y-4" data-testid="job-alerts">
      {job.alerts.length === 0 ? (
        <p className="text-sm text-muted-foreground">No alerts. An alert says when a result crosses a threshold or changes, a check fails or the run fails.</p>
      ) : (
        <ul className="divide-y rounded-lg border" data-testid="alert-list">
          {job.alerts.map((alert, i) => (
            <li key={i} className="flex items-start gap-3 px-3 py-2.5 text-sm" data-testid="alert">
              <BellRing className="mt-0.5 size-4 shrink-0 text-muted-foreground" />
              <div className="min-w-0 flex-1">
                <p className="break-words" data-testid="alert-condition">
                  When {alertCondition(alert)}
                </p>
                <p className="text-xs break-words text-muted-foreground">{alert.deliver.map(deliveryText).join(' · ')}</p>
              </div>
              {editor && (
                <Button
                  variant="ghost"
                  size="icon-sm"
                  aria-label={`Remove the alert: ${alertCondition(alert)}`}
                  disabled={update.isPending}
                  onClick={() => save(job.alerts.filter((_, j) => j !== i))}
                >
                  <Trash2 />
                </Button>
              )}
            </li>
          ))}
        </ul>
      )}
      {!adding && <FormError>{update.isError ? failure(update.error) : null}</FormError>}
      {editor &&
        (adding ? (
          <AlertForm job={job} pending={update.isPending} serverError={update.isError ? failure(update.error) : null} onCancel={() => setAdding(false)} onSave={(a) => save([...job.alerts, a], () => setAdding(false))} />
        ) : (
          <Button variant="outline" size="sm" onClick={() => {
              update.reset();
              setAdding(true);
            }}>
            <Plus /> Add an alert
          </Button>
        ))}
    </div>
  );
}

function AlertForm({
  job,
  pending,
  serverError,
  onSave,
  onCancel,
}: {
  job: Job;
  pending: boolean;
  serverError: string | null;
  onSave: (alert: JobAlert) => void;
  onCancel: () => void;
}) {
  const id = useId();
  const names = job.results.map((r) => r.name);
  const [draft, setDraft] = useState<AlertDraft>(emptyDraft(names[0] ?? ''));
  const [error, setError] = useState<string | null>(null);
  const set = (patch: Partial<AlertDraft>) => setDraft((d) => ({ ...d, ...patch }));
  const select = 'h-9 rounded-md border bg-card px-2 text-sm';
  return (
    <form
      className="space-y-4 rounded-lg border p-4"
      data-testid="alert-form"
      onSubmit={(e) => {
        e.preventDefault();
        const made = draftToAlert(draft, names);
        if ('error' in made) return setError(made.error);
        setError(null);
        onSave(made.alert);
      }}
    >
      <div className="flex flex-wrap items-end gap-3">
        {needsResult(draft.when) && (
          <div className="space-y-1.5">
            <Label htmlFor={`${id}-result`}>When the result</Label>
            <select id={`${id}-result`} className={select} value={draft.result} onChange={(e) => set({ result: e.target.value })}>
              {names.map((n) => (
                <option key={n} value={n}>
                  {n}
                </option>
              ))}
            </select>
          </div>
        )}
        <div className="space-y-1.5">
          <Label htmlFor={`${id}-when`}>{needsResult(draft.when) ? 'Condition' : 'When'}</Label>
          <select id={`${id}-when`} className={select} value={draft.when} onChange={(e) => set({ when: e.target.value as AlertDraft['when'] })}>
            {WHENS.map((w) => (
              <option key={w.value} value={w.value}>
                {w.label}
              </option>
            ))}
          </select>
        </div>
        {needsValue(draft.when) && (
          <div className="space-y-1.5">
            <Label htmlFor={`${id}-value`}>{draft.when === 'change_pct' ? 'Change in % (−10: a fall)' : 'Value'}</Label>
            <Input id={`${id}-value`} inputMode="decimal" value={draft.value} onChange={(e) => set({ value: e.target.value })} className="w-36" />
          </div>
        )}
      </div>
      <fieldset className="space-y-3">
        <legend className="mb-1 text-sm font-medium">Deliver to</legend>
        <div className="space-y-1.5">
          <Label htmlFor={`${id}-email`} className="text-xs font-normal text-muted-foreground">
            Email (addresses, comma separated)
          </Label>
          <Input id={`${id}-email`} value={draft.email} onChange={(e) => set({ email: e.target.value })} placeholder="team@example.com" />
        </div>
        <div className="grid gap-2 sm:grid-cols-[2fr_1fr]">
          <div className="space-y-1.5">
            <Label htmlFor={`${id}-webhook`} className="text-xs font-normal text-muted-foreground">
              Webhook URL
            </Label>
            <Input id={`${id}-webhook`} value={draft.webhook} onChange={(e) => set({ webhook: e.target.value })} placeholder="https://hooks.example.com/…" />
          </div>
          <div className="space-y-1.5">
            <Label htmlFor={`${id}-secret`} className="text-xs font-normal text-muted-foreground">
              Signing secret (optional)
            </Label>
            <Input id={`${id}-secret`} type="password" autoComplete="off" value={draft.secret} onChange={(e) => set({ secret: e.target.value })} />
          </div>
        </div>
        <label className="flex items-center gap-2 text-sm">
          <input type="checkbox" className="size-4 accent-primary" checked={draft.share} onChange={(e) => set({ share: e.target.checked })} />
          The share link (always shows the latest run)
        </label>
      </fieldset>
      <FormError>{error ?? serverError}</FormError>
      <div className="flex gap-2">
        <Button type="submit" disabled={pending}>
          {pending && <Loader2 className="animate-spin" />} Save alert
        </Button>
        <Button type="button" variant="outline" onClick={onCancel}>
          Cancel
        </Button>
      </div>
    </form>
  );
}
