"""The load stage: a campaign folder read into typed inputs, with the findings of reading."""
