import { QueryClientProvider } from '@tanstack/react-query';
import { useEffect } from 'react';
import { createBrowserRouter, RouterProvider } from 'react-router';
import { Toaster } from 'sonner';
import { useAuthStore } from '@/features/auth/auth-store';
import { isPublicQuery } from '@/features/auth/queries';
import { queryClient } from '@/lib/query-client';
import { followSystemTheme, useTheme } from '@/lib/theme';
import { ActivityRoute } from '@/routes/activity';
import { AdminUsersRoute } from '@/routes/admin-users';
import { AppLayout } from '@/routes/app-layout';
import { ChecksRoute } from '@/routes/checks';
import { CompareRoute } from '@/routes/compare';
import { HomeRoute } from '@/routes/home';
import { InviteRoute } from '@/routes/invite';
import { JobRoute, JobsRoute } from '@/routes/jobs';
import { KnowledgeRoute } from '@/routes/knowledge';
import { LoginRoute } from '@/routes/login';
import { ProjectRoute } from '@/routes/project';
import { SessionRoute } from '@/routes/session';
import { SsoRoute } from '@/routes/sso';

const router = createBrowserRouter([
  { path: '/login', element: <LoginRoute /> },
  { path: '/invite', element: <InviteRoute /> },
  { path: '/sso', element: <SsoRoute /> },
  {
    element: <AppLayout />,
    children: [
      { path: '/', element: <HomeRoute /> },
      { path: '/projects/:projectId', element: <ProjectRoute /> },
      { path: '/projects/:projectId/activity', element: <ActivityRoute /> },
      { path: '/projects/:projectId/knowledge', element: <KnowledgeRoute /> },
      { path: '/projects/:projectId/checks', element: <ChecksRoute /> },
      { path: '/projects/:projectId/jobs', element: <JobsRoute /> },
      { path: '/projects/:projectId/jobs/:jobId', element: <JobRoute /> },
      { path: '/projects/:projectId/sessions/:sessionId', element: <SessionRoute /> },
      { path: '/projects/:projectId/compare/:leftId/:rightId', element: <CompareRoute /> },
      { path: '/admin/users', element: <AdminUsersRoute /> },
      { path: '*', element: <p className="p-8 text-sm text-muted-foreground">Page not found.</p> },
    ],
  },
]);

export function App() {
  const theme = useTheme();
  const signedIn = useAuthStore((s) => !!s.auth);
  useEffect(followSystemTheme, []);
  // Cached data belongs to the signed-in user; drop it when they sign out (not how to sign in, which the
  // login page is reading by then).
  useEffect(() => {
    if (!signedIn) queryClient.removeQueries({ predicate: (q) => !isPublicQuery(q.queryKey) });
  }, [signedIn]);
  return (
    <QueryClientProvider client={queryClient}>
      <RouterProvider router={router} />
      <Toaster theme={theme} position="bottom-right" richColors closeButton />
    </QueryClientProvider>
  );
}
