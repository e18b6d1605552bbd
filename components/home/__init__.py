"""The home page's components (light): :mod:`.tables`, the datasets and the latest changes."""
