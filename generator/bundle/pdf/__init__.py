"""The note's PDF verified: its objects bounded, parsed in a child, its signer trusted, alone or in a bundle."""
