const user = args.user;
return user.name;
