import { useQuery } from '@tanstack/react-query';
import { BookOpen, History, ListChecks, Plus, Repeat, UsersRound } from 'lucide-react';
import { useEffect, useState } from 'react';
import { Link, useLocation, useNavigate, useParams } from 'react-router';
import { GuardedButton } from '@/components/guarded-button';
import { Button } from '@/components/ui/button';
import { DefaultAttempts } from '@/features/attempts/default-attempts';
import { ProjectSessionList } from '@/features/branches/project-sessions';
import { DatasetPanel } from '@/features/files/dataset-panel';
import { proposalsQuery } from '@/features/knowledge/queries';
import { MembersDialog } from '@/features/members/members-dialog';
import { projectQuery } from '@/features/projects/queries';
import { blockedFor, ProjectRoleProvider, RoleBadge, roleSentence } from '@/features/projects/role';
import { UsagePanel } from '@/features/projects/usage-panel';
import { ProjectStorage } from '@/features/storage/storage-usage';
import { useCreateSession } from '@/features/sessions/mutations';
import { sessionsQuery } from '@/features/sessions/queries';
import { SourcesPanel } from '@/features/sources/sources-panel';

export function ProjectRoute() {
  const { projectId = '' } = useParams();
  const project = useQuery(projectQuery(projectId));
  const sessions = useQuery(sessionsQuery(projectId));
  const proposals = useQuery({ ...proposalsQuery(projectId), meta: { silent: true } });
  const create = useCreateSession(projectId);
  const navigate = useNavigate();
  const { hash } = useLocation();
  const loaded = !!project.data;
  // "Open project settings" (a refused question) links to #usage, which renders once the project has loaded.
  useEffect(() => {
    if (loaded && hash) document.getElementById(hash.slice(1))?.scrollIntoView({ block: 'start' });
  }, [loaded, hash]);
  const [members, setMembers] = useState(false);
  if (project.error) return <p className="p-8 text-sm text-muted-foreground">This project could not be found.</p>;
  const role = project.data?.role ?? null;
  const said = role && roleSentence(role);
  return (
    <ProjectRoleProvider value={role}>
      <div className="h-full overflow-y-auto">
        <div className="mx-auto max-w-4xl space-y-10 px-6 py-8">
          <header className="flex flex-wrap items-start gap-x-4 gap-y-3">
            <div className="min-w-0 flex-1 basis-64">
              <h1 className="text-2xl font-semibold tracking-tight break-words" data-testid="project-title">
                {project.data?.name ?? '…'}
              </h1>
              {project.data?.description && <p className="mt-1 text-sm text-muted-foreground">{project.data.description}</p>}
              {said && (
                <p className="mt-2 flex items-start gap-2 text-sm text-muted-foreground" data-testid="project-role" data-role={role}>
                  <RoleBadge role={role} className="mt-0.5" />
                  <span>{said}</span>
                </p>
              )}
            </div>
            {project.data && (
              <div className="flex shrink-0 flex-wrap items-center gap-2">
                <Button variant="outline" size="sm" asChild>
                  <Link to={`/projects/${projectId}/knowledge`} data-testid="knowledge-link">
                    <BookOpen /> Knowledge
                    {!!proposals.data?.items.length && (
                      <span className="rounded-full bg-amber-500/15 px-1.5 text-[11px] text-amber-700 dark:text-amber-400" title="Proposals waiting for review">
                        {proposals.data.items.length}
                      </span>
                    )}
                  </Link>
                </Button>
                <Button variant="outline" size="sm" asChild>
                  <Link to={`/projects/${projectId}/checks`} data-testid="checks-link">
                    <ListChecks /> Checks
                  </Link>
                </Button>
                <Button variant="outline" size="sm" asChild>
                  <Link to={`/projects/${projectId}/jobs`} data-testid="jobs-link">
                    <Repeat /> Jobs
                  </Link>
                </Button>
                <Button variant="outline" size="sm" onClick={() => setMembers(true)}>
                  <UsersRound /> Members
                </Button>
                {role === 'owner' && (
                  <Button variant="outline" size="sm" asChild>
                    <Link to={`/projects/${projectId}/activity`}>
                      <History /> Activity
                    </Link>
                  </Button>
                )}
              </div>
            )}
          </header>
          <DatasetPanel projectId={projectId} />
          <SourcesPanel projectId={projectId} />
          <section aria-labelledby="sessions-heading" className="space-y-3">
            <div className="flex items-center justify-between">
              <h2 id="sessions-heading" className="text-base font-semibold">
                Sessions
              </h2>
              <GuardedButton
                size="sm"
                onClick={() => create.mutate(undefined, { onSuccess: (s) => void navigate(`/projects/${projectId}/sessions/${s.id}`) })}
                disabled={create.isPending}
                blockedBecause={blockedFor(role, 'editor', 'start sessions')}
              >
                <Plus /> New session
              </GuardedButton>
            </div>
            {sessions.data?.items.length === 0 && <p className="text-sm text-muted-foreground">No sessions yet. Start one to ask questions.</p>}
            {!!sessions.data?.items.length && <ProjectSessionList projectId={projectId} sessions={sessions.data.items} />}
          </section>
          <ProjectStorage projectId={projectId} />
          {project.data && <UsagePanel project={project.data} />}
          {project.data && <DefaultAttempts project={project.data} />}
        </div>
        {project.data && <MembersDialog project={project.data} open={members} onOpenChange={setMembers} />}
      </div>
    </ProjectRoleProvider>
  );
}
