"""In-app notifications: a project's owners and editors are told of new comments on its
answers (not the comment's author); each user reads and marks their own."""
