import { useQuery, useQueryClient } from '@tanstack/react-query';
import { ListChecks, Pencil, Play, Plus, Trash2 } from 'lucide-react';
import { useEffect, useState } from 'react';
import { toast } from 'sonner';
import { ConfirmDialog } from '@/components/confirm-dialog';
import { GuardedButton } from '@/components/guarded-button';
import { LoadState } from '@/components/notice';
import { Button } from '@/components/ui/button';
import { useBlocked } from '@/features/projects/role';
import { ModelSelect, useModelChoice } from '@/features/system/model-select';
import { modelsQuery } from '@/features/system/queries';
import { CheckForm, type CheckFields } from './check-form';
import { CheckHistory, CheckRunView } from './check-run-view';
import { expectedText, isGoing } from './checks';
import { useAddCheck, useChangeCheck, useDeleteCheck, useRunChecks } from './mutations';
import { checkKeys, checkRunQuery, checkRunsQuery, checksQuery } from './queries';
import type { ProjectCheck } from './types';

export const CHECKS_EMPTY =
  'No checks yet. A check is a question with the answer it must get; run them all before and after approving knowledge to see whether the answers got better.';

/**
 * The project's checks (add, edit, delete), "Run checks" on a chosen model, the run going with its
 * progress, and the history of runs with accuracy, tokens, cost and time, so before and after show.
 */
export function ChecksPage({ projectId }: { projectId: string }) {
  const qc = useQueryClient();
  const checks = useQuery(checksQuery(projectId));
  const history = useQuery(checkRunsQuery(projectId));
  const models = useQuery(modelsQuery());
  const blocked = useBlocked('editor', 'change or run the checks');
  const add = useAddCheck(projectId);
  const change = useChangeCheck(projectId);
  const del = useDeleteCheck(projectId);
  const start = useRunChecks(projectId);
  const [adding, setAdding] = useState(false);
  const [editing, setEditing] = useState<string | null>(null);
  const [deleting, setDeleting] = useState<ProjectCheck | null>(null);
  const [model, setModel] = useModelChoice(models.data);
  const [selected, setSelected] = useState<string | null>(null);

  const runs = history.data?.items ?? [];
  const shownId = selected ?? runs[0]?.id ?? null;
  const shown = useQuery({ ...checkRunQuery(shownId ?? ''), enabled: !!shownId });
  const going = !!shown.data && isGoing(shown.data.status);
  // The history's row says "running…" until the run it polls has finished.
  useEffect(() => {
    if (shown.data && !isGoing(shown.data.status)) void qc.invalidateQueries({ queryKey: checkKeys.runs(projectId) });
  }, [shown.data, qc, projectId]);

  const list = checks.data?.items ?? [];
  const save = (fields: CheckFields, id?: string) => {
    const done = {
      onSuccess: () => {
        setAdding(false);
        setEditing(null);
      },
    };
    if (id) change.mutate({ id, ...fields }, done);
    else add.mutate(fields, done);
  };

  return (
    <div className="space-y-8">
      <section aria-labelledby="checks-heading" className="space-y-3">
        <div className="flex items-center gap-2">
          <h2 id="checks-heading" className="flex-1 text-base font-semibold">
            Checks {list.length > 0 && <span className="text-sm font-normal text-muted-foreground">({list.length})</span>}
          </h2>
          <GuardedButton
            size="sm"
            variant="outline"
            blockedBecause={blocked}
            onClick={() => {
              add.reset();
              setAdding(true);
            }}
          >
            <Plus /> Add check
          </GuardedButton>
        </div>
        {adding && <CheckForm onSave={(f) => save(f)} onCancel={() => setAdding(false)} pending={add.isPending} error={add.error?.message} />}
        <LoadState query={checks} loading="Loading the checks…" />
        {checks.data && list.length === 0 && !adding && (
          <p className="flex items-start gap-3 rounded-lg border border-dashed px-4 py-6 text-sm text-muted-foreground" data-testid="checks-empty">
            <ListChecks className="mt-0.5 size-5 shrink-0" /> {CHECKS_EMPTY}
          </p>
        )}
        {list.length > 0 && (
          <ul className="divide-y overflow-hidden rounded-lg border bg-card" data-testid="checks-list">
            {list.map((c) =>
              editing === c.id ? (
                <li key={c.id} className="p-2">
                  <CheckForm check={c} onSave={(f) => save(f, c.id)} onCancel={() => setEditing(null)} pending={change.isPending} error={change.error?.message} />
                </li>
              ) : (
                <li key={c.id} className="flex items-start gap-3 px-4 py-3 text-sm" data-testid="check">
                  <div className="min-w-0 flex-1 space-y-0.5">
                    <p className="break-words">{c.question}</p>
                    <p className="font-mono text-xs text-muted-foreground">{expectedText(c.expected)}</p>
                  </div>
                  {!blocked && (
                    <div className="flex shrink-0 gap-1">
                      <Button variant="ghost" size="sm" aria-label="Edit the check" onClick={() => setEditing(c.id)}>
                        <Pencil />
                      </Button>
                      <Button variant="ghost" size="sm" aria-label="Delete the check" onClick={() => setDeleting(c)}>
                        <Trash2 />
                      </Button>
                    </div>
                  )}
                </li>
              ),
            )}
          </ul>
        )}
      </section>
      <section aria-labelledby="runs-heading" className="space-y-3">
        <div className="flex flex-wrap items-center gap-2">
          <h2 id="runs-heading" className="flex-1 text-base font-semibold">
            Runs
          </h2>
          <ModelSelect models={models.data} value={model} onChange={setModel} className="max-w-56 border bg-card" />
          <GuardedButton
            size="sm"
            blockedBecause={blocked ?? (list.length === 0 ? 'Add a check first.' : null)}
            disabled={start.isPending || going}
            onClick={() =>
              start.mutate(model, {
                onSuccess: (r) => setSelected(r.id),
                onError: (e) => toast.error(e.message),
              })
            }
          >
            <Play /> Run checks
          </GuardedButton>
        </div>
        {shown.data && <CheckRunView run={shown.data} checks={list} projectId={projectId} />}
        {runs.length > 0 ? (
          <CheckHistory runs={runs} selected={shownId} onSelect={setSelected} />
        ) : (
          history.data && <p className="text-sm text-muted-foreground">The checks have not been run yet.</p>
        )}
      </section>
      <ConfirmDialog
        open={!!deleting}
        onOpenChange={(o) => !o && setDeleting(null)}
        title="Delete this check?"
        description={`“${deleting?.question ?? ''}” will no longer be asked. Past runs keep its results.`}
        pending={del.isPending}
        onConfirm={() => deleting && del.mutate(deleting.id, { onSuccess: () => setDeleting(null), onError: (e) => toast.error(e.message) })}
      />
    </div>
  );
}
