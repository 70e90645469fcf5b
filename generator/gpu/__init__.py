"""The GPU side: measure a configuration and run a campaign (standard library, torch and numpy only)."""
