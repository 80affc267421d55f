"""Base floor: findings and reports, errors, bounded JSON reading, input-rule message templates,
output streams, OS-error and signal handling. Imports nothing else of spec_format."""
