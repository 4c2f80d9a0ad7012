import { useQuery } from '@tanstack/react-query';
import { FolderClosed, Plus } from 'lucide-react';
import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { NameDialog } from '@/components/name-dialog';
import { Button } from '@/components/ui/button';
import { useCreateProject } from '@/features/projects/mutations';
import { projectsQuery } from '@/features/projects/queries';
import { RoleBadge } from '@/features/projects/role';
import { OpenDemoButton } from '@/features/demo/open-demo';
import { noModelConfigured } from '@/features/system/model-banner';
import { modelsQuery } from '@/features/system/queries';
import { formatDate } from '@/lib/utils';

export function HomeRoute() {
  const projects = useQuery(projectsQuery());
  const models = useQuery(modelsQuery());
  const create = useCreateProject();
  const navigate = useNavigate();
  const [open, setOpen] = useState(false);
  return (
    <div className="h-full overflow-y-auto">
      <div className="mx-auto max-w-3xl space-y-6 px-6 py-10">
        <div className="flex items-end justify-between gap-4">
          <div>
            <h1 className="text-2xl font-semibold tracking-tight">Projects</h1>
            <p className="text-sm text-muted-foreground">Upload datasets to a project, then ask questions about them in a session.</p>
          </div>
          <Button onClick={() => setOpen(true)}>
            <Plus /> New project
          </Button>
        </div>
        <div className="grid gap-3 sm:grid-cols-2">
          {projects.data?.items.map((p) => (
            <Link key={p.id} to={`/projects/${p.id}`} className="rounded-xl border bg-card p-4 shadow-xs transition-colors hover:border-primary/50">
              <div className="flex items-center gap-2 font-medium">
                <FolderClosed className="size-4 shrink-0 text-primary" />
                <span className="min-w-0 truncate">{p.name}</span>
                <RoleBadge role={p.role} className="ml-auto" />
              </div>
              <p className="mt-1 text-xs text-muted-foreground">Updated {formatDate(p.updated_at)}</p>
            </Link>
          ))}
        </div>
        {projects.data?.items.length === 0 && (
          <div className="space-y-3 rounded-xl border border-dashed p-10 text-center text-sm text-muted-foreground">
            <p>No projects yet. Create your first one to get started.</p>
            {noModelConfigured(models.data) && (
              <div className="space-y-2" data-testid="demo-offer">
                <p>No model is connected yet: see the product work on a demo project first (its own dataset and a recorded session).</p>
                <OpenDemoButton size="default" />
              </div>
            )}
          </div>
        )}
      </div>
      <NameDialog
        open={open}
        onOpenChange={setOpen}
        title="New project"
        description="A project holds datasets and the analysis sessions about them."
        label="Name"
        submitLabel="Create project"
        pending={create.isPending}
        onSubmit={(name) =>
          create.mutate(name, {
            onSuccess: (p) => {
              setOpen(false);
              void navigate(`/projects/${p.id}`);
            },
          })
        }
      />
    </div>
  );
}
