import type { CheckResultOut, CheckRunOut, ProjectCheckOut } from '@/client';

/** A project's checks as the API gives them (API.md, "Project knowledge and checks"), from the generated client. */
export type ProjectCheck = ProjectCheckOut;
export type CheckRun = CheckRunOut;
export type CheckResult = CheckResultOut;
export type CheckRunStatus = CheckRunOut['status'];
