import { Navigate, useLocation } from 'react-router';
import { useAuthStore } from '@/features/auth/auth-store';
import { LoginForm } from '@/features/auth/login-form';

export function LoginRoute() {
  const auth = useAuthStore((s) => s.auth);
  const location = useLocation();
  const from = (location.state as { from?: string } | null)?.from;
  if (auth) return <Navigate to={from && from !== '/login' ? from : '/'} replace />;
  return <LoginForm />;
}
