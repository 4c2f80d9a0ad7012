"""Jobs (issue 45): the code that produced a session's answers, made into a script that runs
with no model, with its parameters, named results and data checks, and its runs.

Who does what:
    script          the script: recorded code → PARAMS and run(params) -> results
    checks_prompt   what the model is asked for the checks, and what is kept of its reply
    checks_writer   writes the checks when a job is made, runs them until they pass
    driver          what a job run executes in the sandbox (checks, job, report)
    execution       runs code in the job's session (a run of kind `cell`) and waits
    runner          JobRunner: admits, bounds, leases, skips, records job runs
    service         reading and writing jobs and job runs
    export          job.py + test_job.py (zip), or a notebook with a `parameters` cell
    repair          after a run failed because of its code: new code proposed by the model
                    and checked in the sandbox (JobRepairer, the runner's `repairs`)
    repair_prompt   what the model is asked for a repair, and what is kept of its reply
    repairs         a job's repairs shown, approved (applied) or rejected

For the scheduler (app.jobs.ticker, elsewhere) and alerts: the app's JobRunner is
`app.state.jobs`;
    `await app.state.jobs.start_job_run(job_id, trigger, params=None) -> job_run_id`
records a queued run and runs it in the background (raises JobRunInProgress, ChecksPending,
TooManyRequests with retry_after, NotFound, Unprocessable for unknown parameters), and
    `app.state.jobs.on_job_run_finished`
is a list of `async def hook(job_run_id)` called once each run ended (any status, the
sweeper's included); a hook that raises is logged and the others still run. A job run's
`change` is left `{}` here, for the comparison with the previous run to fill.
"""
