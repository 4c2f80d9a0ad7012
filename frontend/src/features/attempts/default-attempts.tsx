import { useMutation, useQueryClient } from '@tanstack/react-query';
import { updateProject, type ProjectOut } from '@/client';
import { Segmented } from '@/components/ui/segmented';
import { useBlocked } from '@/features/projects/role';
import { projectKeys } from '@/features/projects/queries';
import { MAX_ATTEMPTS, MIN_ATTEMPTS } from './types';

const CHOICES = Array.from({ length: MAX_ATTEMPTS - MIN_ATTEMPTS + 1 }, (_, i) => MIN_ATTEMPTS + i);

/** PATCH /projects/{id} `{default_attempts}`. */
function useSetDefaultAttempts(projectId: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: async (n: number) =>
      (await updateProject({ path: { project_id: projectId }, body: { default_attempts: n } })).data!,
    meta: { silent: true },
    onSuccess: (project) => {
      qc.setQueryData(projectKeys.detail(projectId), project);
      void qc.invalidateQueries({ queryKey: projectKeys.all, exact: true });
    },
  });
}

/** The project's setting: how many independent attempts a question runs when the asker does not say. */
export function DefaultAttempts({ project }: { project: ProjectOut }) {
  const set = useSetDefaultAttempts(project.id);
  const blocked = useBlocked('editor', 'change the default attempts');
  const saved = project.default_attempts ?? 1;
  const value = set.isPending ? set.variables : saved;
  return (
    <section aria-labelledby="attempts-heading" className="space-y-3" data-testid="default-attempts">
      <div>
        <h2 id="attempts-heading" className="text-base font-semibold">
          Checked answers
        </h2>
        <p className="text-sm text-muted-foreground">
          How many independent attempts each question runs by default. With more than one, their answers are compared and the answer says
          whether they agree. Each attempt costs as much as a question.
        </p>
      </div>
      <div className="flex flex-wrap items-center gap-3 rounded-lg border bg-card px-4 py-3" title={blocked ?? undefined}>
        <span className="text-sm" id="attempts-label">
          Attempts per question
        </span>
        <Segmented
          label="Attempts per question"
          items={CHOICES.map((n) => ({ value: n, content: n === 1 ? '1 (off)' : String(n) }))}
          value={value}
          onChange={(n) => {
            if (blocked || set.isPending || n === value) return;
            set.mutate(n);
          }}
          className="grid-cols-5 p-0.5 [&>button]:px-3 [&>button]:py-1 [&>button]:text-xs"
        />
        {set.error && (
          <p role="alert" className="basis-full text-xs text-destructive">
            {set.error.message}
          </p>
        )}
      </div>
    </section>
  );
}
