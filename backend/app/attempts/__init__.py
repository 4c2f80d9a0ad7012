"""Attempts: one question answered by N independent agents at once, and a vote on what
their code computed (issue 44; API.md "Attempts and verdicts").

Who does what:
    strategies  how each attempt is told to answer (instructions, sampling, model)
    spaces      each attempt's own folder and worker, forked from the session's state
    numbering   how the attempts' steps are numbered on the run
    rows        an attempt's steps, artifacts and events, kept apart on the one run
    driver      one attempt's agent, in its own worker (a RunExecution of its own)
    fanout      the run: N attempts at once, then the vote, the verdict and the choice
    vote        answers reduced to comparable values, grouped by agreement
    judge       the critic's pairwise look when no group has a majority
    choose      the chosen attempt's state and files become the session's
    estimate    what N attempts would spend, refused up front past the budget
"""
