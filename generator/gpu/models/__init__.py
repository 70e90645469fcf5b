"""The models a campaign runs: a Hugging Face model directory, and the reference classifier."""
