import { useQuery } from '@tanstack/react-query';
import { MessageSquare, Plus } from 'lucide-react';
import { useEffect } from 'react';
import { Link, useLocation, useNavigate, useParams } from 'react-router';
import { Button } from '@/components/ui/button';
import { DatasetPanel } from '@/features/files/dataset-panel';
import { projectQuery } from '@/features/projects/queries';
import { UsagePanel } from '@/features/projects/usage-panel';
import { ReviewBadge } from '@/features/sessions/autonomy-switch';
import { useCreateSession } from '@/features/sessions/mutations';
import { sessionsQuery } from '@/features/sessions/queries';
import { SourcesPanel } from '@/features/sources/sources-panel';
import { formatDate } from '@/lib/utils';

export function ProjectRoute() {
  const { projectId = '' } = useParams();
  const project = useQuery(projectQuery(projectId));
  const sessions = useQuery(sessionsQuery(projectId));
  const create = useCreateSession(projectId);
  const navigate = useNavigate();
  const { hash } = useLocation();
  const loaded = !!project.data;
  // "Open project settings" (a refused question) links to #usage, which renders once the project has loaded.
  useEffect(() => {
    if (loaded && hash) document.getElementById(hash.slice(1))?.scrollIntoView({ block: 'start' });
  }, [loaded, hash]);
  if (project.error) return <p className="p-8 text-sm text-muted-foreground">This project could not be found.</p>;
  return (
    <div className="h-full overflow-y-auto">
      <div className="mx-auto max-w-4xl space-y-10 px-6 py-8">
        <header>
          <h1 className="text-2xl font-semibold tracking-tight" data-testid="project-title">
            {project.data?.name ?? '…'}
          </h1>
          {project.data?.description && <p className="mt-1 text-sm text-muted-foreground">{project.data.description}</p>}
        </header>
        <DatasetPanel projectId={projectId} />
        <SourcesPanel projectId={projectId} />
        <section aria-labelledby="sessions-heading" className="space-y-3">
          <div className="flex items-center justify-between">
            <h2 id="sessions-heading" className="text-base font-semibold">
              Sessions
            </h2>
            <Button
              size="sm"
              onClick={() => create.mutate(undefined, { onSuccess: (s) => void navigate(`/projects/${projectId}/sessions/${s.id}`) })}
              disabled={create.isPending}
            >
              <Plus /> New session
            </Button>
          </div>
          {sessions.data?.items.length === 0 && <p className="text-sm text-muted-foreground">No sessions yet. Start one to ask questions.</p>}
          <ul className="divide-y overflow-hidden rounded-lg border bg-card">
            {sessions.data?.items.map((s) => (
              <li key={s.id}>
                <Link to={`/projects/${projectId}/sessions/${s.id}`} className="flex items-center gap-3 px-4 py-3 text-sm hover:bg-muted/50">
                  <MessageSquare className="size-4 text-muted-foreground" />
                  <span className="flex-1 truncate font-medium">{s.title || 'Untitled session'}</span>
                  {s.autonomy === 'review' && <ReviewBadge />}
                  <span className="text-xs text-muted-foreground">{formatDate(s.updated_at)}</span>
                </Link>
              </li>
            ))}
          </ul>
        </section>
        {project.data && <UsagePanel project={project.data} />}
      </div>
    </div>
  );
}
